import { ExtractedDocument } from './extracted-document';
import { decodeText } from './text-decoding';

const QUOTE = 0x22;
const SPACE = 0x20;
const CR = 0x0d;
const LF = 0x0a;
const CANDIDATE_DELIMITERS = [',', ';', '\t', '|'];

/**
 * RFC 4180 CSV (and the semicolon, tab and pipe variants spreadsheet exports produce) as one line
 * per record, fields trimmed and tab-separated; line breaks inside quoted fields become spaces so
 * a record stays one line.
 */
export function extractCsv(bytes: Buffer): ExtractedDocument {
  const text = decodeText(bytes);
  return { segments: [{ text: parseCsvLines(text, sniffDelimiter(text)).join('\n') }] };
}

export function parseCsvLines(text: string, delimiter = ','): string[] {
  const separator = delimiter.charCodeAt(0);
  const lines: string[] = [];
  let fields: string[] = [];
  const endRecord = () => {
    while (fields.length && fields[fields.length - 1] === '') fields.pop();
    if (fields.length) lines.push(fields.join('\t'));
    fields = [];
  };
  let i = 0;
  while (i < text.length) {
    let j = i;
    while (text.charCodeAt(j) === SPACE) j++;
    let value: string;
    if (text.charCodeAt(j) === QUOTE) {
      const quoted = readQuoted(text, j + 1);
      // Text between a closing quote and the delimiter is kept, as lenient readers do.
      const end = fieldEnd(text, quoted.next, separator);
      value = quoted.value.replace(/\s*[\r\n]+\s*/g, ' ') + text.slice(quoted.next, end);
      j = end;
    } else {
      j = fieldEnd(text, i, separator);
      value = text.slice(i, j);
    }
    fields.push(value.trim());
    const stop = text.charCodeAt(j);
    if (stop === separator) {
      i = j + 1;
      continue;
    }
    endRecord();
    i = j + (stop === CR && text.charCodeAt(j + 1) === LF ? 2 : 1);
  }
  endRecord();
  return lines;
}

function readQuoted(text: string, from: number): { value: string; next: number } {
  let value = '';
  let j = from;
  for (;;) {
    const close = text.indexOf('"', j);
    if (close === -1) return { value: value + text.slice(j), next: text.length };
    value += text.slice(j, close);
    if (text.charCodeAt(close + 1) !== QUOTE) return { value, next: close + 1 };
    value += '"';
    j = close + 2;
  }
}

function fieldEnd(text: string, from: number, separator: number): number {
  let j = from;
  for (; j < text.length; j++) {
    const code = text.charCodeAt(j);
    if (code === separator || code === LF || code === CR) break;
  }
  return j;
}

/** The candidate that occurs most often, outside quotes, in the first record. */
export function sniffDelimiter(text: string): string {
  const counts = new Map<string, number>(CANDIDATE_DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (let i = 0; i < text.length && i < 64 * 1024; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  for (const [delimiter, count] of counts) if (count > counts.get(best)!) best = delimiter;
  return best;
}
