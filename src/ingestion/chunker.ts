import { ExtractedDocument, ExtractedSegment } from './extractors/extracted-document';

/** What a search returns: about `passageChars` characters cut on paragraph, then sentence boundaries. */
export interface Passage {
  /** 0-based, in document order. */
  index: number;
  content: string;
  /** The PDF page the passage comes from; a passage never spans two pages. */
  page?: number;
}

/** What is embedded: one to a few sentences, sized for a sentence encoder, pointing to its passage. */
export interface EmbeddingWindow {
  passageIndex: number;
  text: string;
}

export interface ChunkOptions {
  /** Largest passage, in characters; default 1000. */
  passageChars?: number;
  /** Most sentences in one embedding window; default 3. */
  windowSentences?: number;
  /** Largest embedding window, in characters; default 400. */
  windowMaxChars?: number;
}

export interface Chunks {
  passages: Passage[];
  windows: EmbeddingWindow[];
}

const DEFAULTS: Required<ChunkOptions> = { passageChars: 1000, windowSentences: 3, windowMaxChars: 400 };

/** A passage that has reached this share of its size closes at a paragraph end rather than split the next paragraph. */
const MIN_FILL_BEFORE_PARAGRAPH_BREAK = 0.5;
/** A line no longer than this without closing punctuation is taken for a heading and joins the sentence after it. */
const HEADING_MAX_CHARS = 80;

/** A sentence (or a piece of an over-long one) as a span of the normalised text. */
interface Unit {
  start: number;
  end: number;
  /** First unit of a paragraph, table row or list item. */
  paragraphStart: boolean;
}

/**
 * Splits a document into passages and embedding windows in one linear pass per page. Whitespace
 * is normalised (runs collapse; single line breaks become spaces unless they separate table rows,
 * list items or headings). Passage content is a slice of that text, so passages together cover
 * all of it, in order.
 */
export function chunk(doc: ExtractedDocument, opts: ChunkOptions = {}): Chunks {
  const options = resolveOptions(opts);
  const result: Chunks = { passages: [], windows: [] };
  for (const group of pageGroups(doc.segments)) {
    const page = group[0].page;
    const text = normaliseWhitespace(group.map((segment) => segment.text).join('\n\n'));
    const units = sentenceUnits(text, options.passageChars);
    for (const passageUnits of packPassages(text, units, options.passageChars)) {
      const index = result.passages.length;
      const first = passageUnits[0];
      const last = passageUnits[passageUnits.length - 1];
      const passage: Passage = { index, content: text.slice(first.start, last.end) };
      if (page !== undefined) passage.page = page;
      result.passages.push(passage);
      for (const window of packWindows(text, passageUnits, options)) {
        result.windows.push({ passageIndex: index, text: oneLine(text.slice(window.start, window.end)) });
      }
    }
  }
  return result;
}

/** Normalised text holds single spaces, tabs and newlines only: flatten the last two. */
function oneLine(text: string): string {
  return /[\t\n]/.test(text) ? text.replace(/[\t\n]+/g, ' ') : text;
}

function resolveOptions(opts: ChunkOptions): Required<ChunkOptions> {
  const options = { ...DEFAULTS, ...opts };
  for (const [name, value] of Object.entries(options)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`chunk option ${name} must be a positive integer`);
  }
  return options;
}

/**
 * Consecutive segments of the same page (or all page-less segments in a row): the chunker's unit,
 * so chunking group by group cuts exactly as chunking the whole document. With `release`, each
 * segment is dropped from `segments` as it is handed out, letting its text be collected once used.
 */
export function* pageGroups(segments: ExtractedSegment[], options: { release?: boolean } = {}): Generator<ExtractedSegment[]> {
  let group: ExtractedSegment[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (options.release) (segments as (ExtractedSegment | undefined)[])[i] = undefined;
    if (group.length && group[0].page !== segment.page) {
      yield group;
      group = [];
    }
    group.push(segment);
  }
  if (group.length) yield group;
}

const LIST_ITEM = /^(?:[-*+•‣◦▪–—]|\d{1,3}[.)]|[a-zA-Z][.)])\s/;

/**
 * Line endings unified, invisible characters dropped, runs of spaces collapsed (a run holding a
 * tab stays one tab: it separates table cells), lines trimmed, blank-line runs reduced to one,
 * and a single line break kept only where it separates table rows, list items or headings.
 * Other single breaks are the soft wraps of PDF lines and become spaces.
 */
export function normaliseWhitespace(raw: string): string {
  const text = (alreadyPlain(raw) ? raw : plainWhitespace(raw)).trim();
  const lines = text.split('\n');
  const out: string[] = [lines[0]];
  for (let i = 1; i < lines.length; i++) {
    const previous = lines[i - 1];
    const line = lines[i];
    out.push(line === '' || previous === '' || isHardBreak(previous, line) ? '\n' : ' ', line);
  }
  return out.join('');
}

/** normaliseWhitespace's replacements, each a pass over the whole text. */
function plainWhitespace(raw: string): string {
  return raw
    .replace(/\r\n?|[\u2028\u0085]/g, '\n')
    .replace(/[\f\v\u2029]/g, '\n\n')
    .replace(/[\u00ad\u200b-\u200d\u2060\ufeff]/g, '')
    .replace(/[\u0000-\u0008\u000e-\u001f\u007f]/g, ' ')
    .replace(/[^\S\n]{2,}|[^\S\n ]/g, (run) => (run.includes('\t') ? '\t' : ' '))
    .replace(/[ \t]*\n[ \t]*/g, '\n')
    .replace(/\n{3,}/g, '\n\n');
}

/**
 * Whether plainWhitespace would leave `text` as it is: its only whitespace single spaces and line
 * breaks, no space beside a break, no three breaks in a row, nothing to drop or replace. Most
 * extracted text is, and one scan of it costs a fraction of the seven passes (the passes were 40-50
 * µs a passage of 900 characters, the most of chunking's CPU while ingesting).
 */
function alreadyPlain(text: string): boolean {
  let previous = -1;
  let breaks = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x0a) {
      if (previous === 0x20 || ++breaks === 3) return false;
    } else {
      breaks = 0;
      if (code === 0x20) {
        if (previous === 0x20 || previous === 0x0a) return false;
      } else if (code < 0x20 || code === 0x7f) return false;
      else if (code >= 0x85 && unusualAbove0x84(code)) return false;
    }
    previous = code;
  }
  return true;
}

/** Whitespace other than a space or a break, and the invisible characters plainWhitespace drops or replaces. */
function unusualAbove0x84(code: number): boolean {
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0xad ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200d) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x2060 ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

function isHardBreak(previous: string, next: string): boolean {
  return previous.includes('\t') || next.includes('\t') || previous.startsWith('#') || next.startsWith('#') || LIST_ITEM.test(next);
}

const ABBREVIATIONS = new Set(['mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'vs', 'fig', 'no', 'approx', 'e.g', 'i.e', 'cf', 'al']);
const NEWLINE = 0x0a;
const FULL_STOP = 0x2e;
/** . ! ? and the ellipsis character. */
const TERMINALS = new Set([FULL_STOP, 0x21, 0x3f, 0x2026]);
/** Ideographic full stop, fullwidth ! and ?: they end a sentence without a following space. */
const CJK_TERMINALS = new Set([0x3002, 0xff01, 0xff1f]);
/** Where sentenceUnits looks: line breaks, TERMINALS and CJK_TERMINALS. */
const STOPS = /[\n.!?\u2026\u3002\uff01\uff1f]/g;
/** Quotes and brackets that may follow the punctuation that ends a sentence. */
const CLOSERS = new Set([...'"\'\u201d\u2019\u00bb)]'].map((ch) => ch.charCodeAt(0)));

/**
 * Sentences as spans: a sentence ends at closing punctuation (and any quotes or brackets after
 * it) followed by whitespace, at CJK full stops, and at the line breaks normalisation kept.
 * Sentences longer than maxChars are cut at spaces. A hand-written scan: on large documents a
 * regular expression's per-match allocations cost more than the scan itself.
 */
function sentenceUnits(text: string, maxChars: number): Unit[] {
  const units: Unit[] = [];
  let start = 0;
  let previousEnd = 0;
  const push = (from: number, to: number) => {
    while (from < to && isSpace(text.charCodeAt(from))) from++;
    while (to > from && isSpace(text.charCodeAt(to - 1))) to--;
    if (from === to) return;
    // Any line break left after normalisation ends a paragraph, a table row or a list item.
    let paragraphStart = units.length === 0;
    for (let k = previousEnd; k < from && !paragraphStart; k++) paragraphStart = text.charCodeAt(k) === NEWLINE;
    forEachPiece(text, from, to, maxChars, (pieceStart, pieceEnd) => {
      units.push({ start: pieceStart, end: pieceEnd, paragraphStart: paragraphStart && pieceStart === from });
    });
    previousEnd = to;
  };
  for (let i = 0; i < text.length; i++) {
    // Straight to the next character that can end a unit: the regular expression engine skips the
    // rest faster than a loop over every character, and test() allocates nothing.
    STOPS.lastIndex = i;
    if (!STOPS.test(text)) break;
    i = STOPS.lastIndex - 1;
    const code = text.charCodeAt(i);
    if (code === NEWLINE) {
      push(start, i);
      start = i + 1;
    } else if (CJK_TERMINALS.has(code)) {
      let after = i + 1;
      while (CJK_TERMINALS.has(text.charCodeAt(after))) after++;
      push(start, after);
      start = after;
      i = after - 1;
    } else if (TERMINALS.has(code)) {
      let after = i + 1;
      while (TERMINALS.has(text.charCodeAt(after))) after++;
      while (CLOSERS.has(text.charCodeAt(after))) after++;
      if ((after === text.length || isSpace(text.charCodeAt(after))) && endsSentence(text, i, after)) {
        push(start, after);
        start = after;
      }
      i = after - 1;
    }
  }
  push(start, text.length);
  return units;
}

function endsSentence(text: string, punctuationAt: number, after: number): boolean {
  let next = after;
  while (next < text.length && text.charCodeAt(next) !== NEWLINE && isSpace(text.charCodeAt(next))) next++;
  if (next < text.length && isLowerCase(text.charCodeAt(next))) return false;
  if (text.charCodeAt(punctuationAt) !== FULL_STOP || after - punctuationAt > 1) return true;
  let wordStart = punctuationAt;
  while (wordStart > 0 && /[\p{L}.]/u.test(text[wordStart - 1])) wordStart--;
  const word = text.slice(wordStart, punctuationAt);
  // Initials ("J. R. Tolkien") and common abbreviations do not end a sentence.
  return word.length > 1 && !ABBREVIATIONS.has(word.toLowerCase());
}

function isLowerCase(code: number): boolean {
  if (code < 0x80) return code >= 0x61 && code <= 0x7a;
  return /\p{Ll}/u.test(String.fromCharCode(code));
}

/**
 * Calls `piece` for each part of [from, to) when cut into pieces of at most maxChars, each ending
 * at a space when one exists in the second half of the piece; a single token longer than that
 * is cut where it must be.
 */
function forEachPiece(text: string, from: number, to: number, maxChars: number, piece: (start: number, end: number) => void): void {
  let start = from;
  while (to - start > maxChars) {
    let cut = start + maxChars;
    const floor = start + Math.floor(maxChars / 2);
    while (cut > floor && !isSpace(text.charCodeAt(cut))) cut--;
    if (cut === floor) cut = start + maxChars;
    let end = cut;
    while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
    piece(start, end);
    start = cut;
    while (start < to && isSpace(text.charCodeAt(start))) start++;
  }
  if (start < to) piece(start, to);
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a;
}

/**
 * Greedy packing: sentences join a passage while it stays within maxChars. A passage at least
 * half full ends before a paragraph that would not fit whole, and a heading at its end moves on
 * with the paragraph it introduces.
 */
function packPassages(text: string, units: Unit[], maxChars: number): Unit[][] {
  const paragraphEnds = new Array<number>(units.length);
  for (let i = units.length - 1; i >= 0; i--) {
    paragraphEnds[i] = i + 1 < units.length && !units[i + 1].paragraphStart ? paragraphEnds[i + 1] : units[i].end;
  }
  const passages: Unit[][] = [];
  let current: Unit[] = [];
  for (let i = 0; i < units.length; i++) {
    const unit = units[i];
    if (current.length) {
      const start = current[0].start;
      const filled = current[current.length - 1].end - start;
      const overflows = unit.end - start > maxChars;
      const paragraphWouldSplit =
        unit.paragraphStart && paragraphEnds[i] - start > maxChars && filled >= maxChars * MIN_FILL_BEFORE_PARAGRAPH_BREAK;
      if (overflows || paragraphWouldSplit) {
        const carried = unit.paragraphStart ? trailingHeading(text, current, unit, maxChars) : undefined;
        if (carried) current.pop();
        passages.push(current);
        current = carried ? [carried] : [];
      }
    }
    current.push(unit);
  }
  if (current.length) passages.push(current);
  return passages;
}

/** The passage's last unit when it is a heading of its own that still fits with `next`. */
function trailingHeading(text: string, passage: Unit[], next: Unit, maxChars: number): Unit | undefined {
  const last = passage[passage.length - 1];
  if (passage.length < 2 || !last.paragraphStart || next.end - last.start > maxChars) return undefined;
  return isHeading(text, last.start, last.end) ? last : undefined;
}

/**
 * Up to windowSentences consecutive sentences within windowMaxChars. A heading (a short line
 * without closing punctuation) opens a window and joins the sentence after it; a sentence longer
 * than the window is cut at spaces into windows of its own.
 */
function packWindows(text: string, units: Unit[], options: Required<ChunkOptions>): Array<{ start: number; end: number }> {
  const windows: Array<{ start: number; end: number }> = [];
  let current: { start: number; end: number; sentences: number } | undefined;
  let headingPending = false;
  for (let i = 0; i < units.length; i++) {
    const hasNext = i + 1 < units.length;
    forEachPiece(text, units[i].start, units[i].end, options.windowMaxChars, (start, end) => {
      const heading = hasNext && isHeading(text, start, end);
      if (current) {
        const full = current.sentences >= options.windowSentences && !headingPending;
        const tooLong = end - current.start > options.windowMaxChars;
        const headingStartsNew = heading && !headingPending;
        if (full || tooLong || headingStartsNew) {
          windows.push(current);
          current = undefined;
        }
      }
      if (!current) current = { start, end, sentences: 0 };
      current.end = end;
      if (!heading) current.sentences++;
      headingPending = heading;
    });
  }
  if (current) windows.push(current);
  return windows;
}

function isHeading(text: string, start: number, end: number): boolean {
  if (end - start > HEADING_MAX_CHARS) return false;
  const last = text[end - 1];
  if ('.!?…:;,。！？'.includes(last)) return false;
  // Table rows are data, not headings.
  return !text.slice(start, end).includes('\t');
}
