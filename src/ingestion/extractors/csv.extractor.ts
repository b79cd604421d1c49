import { CsvError, parse, Options } from 'csv-parse/sync';
import { ExtractedDocument } from './extracted-document';
import { decodeText } from './text-decoding';

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

/**
 * Lenient on purpose, since the text of a malformed file is still worth indexing: records may
 * differ in length, a quote inside an unquoted field is a character, and the three line ends may
 * be mixed in one file (exports that were edited on several systems).
 */
export function parseCsvLines(text: string, delimiter = ','): string[] {
  let lines: string[] = [];
  const attempt: Attempt = {
    input: text,
    quoteClosed: false,
    options: {
      delimiter,
      record_delimiter: ['\r\n', '\n', '\r'],
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
      on_record: (record: string[]) => {
        const line = recordLine(record);
        if (line !== undefined) lines.push(line);
        return null;
      },
    },
  };
  for (;;) {
    try {
      parse(attempt.input, attempt.options);
      return lines;
    } catch (error) {
      if (!(error instanceof CsvError) || !relaxedFor(error, attempt)) throw error;
      lines = [];
    }
  }
}

interface Attempt {
  input: string;
  options: Options;
  quoteClosed: boolean;
}

/**
 * csv-parse rejects two shapes even in relaxed mode; each is retried once, relaxed further. A quote
 * opened and never closed runs to the end of the file, as lenient readers do. Text after a closing
 * quote and a space (`"a" b,c`) is read without csv-parse's right trim, which keeps the quotes of
 * such fields as written rather than losing the file. False when the error is none of these.
 */
function relaxedFor(error: CsvError, attempt: Attempt): boolean {
  if (error.code === 'CSV_QUOTE_NOT_CLOSED' && !attempt.quoteClosed) {
    attempt.input += '"';
    attempt.quoteClosed = true;
    return true;
  }
  if (error.code === 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE' && attempt.options.rtrim !== false) {
    attempt.options = { ...attempt.options, trim: false, ltrim: true, rtrim: false };
    return true;
  }
  return false;
}

/** Fields trimmed and tab-joined; trailing empty fields dropped; undefined for an empty record. */
function recordLine(record: string[]): string | undefined {
  let end = record.length;
  while (end > 0 && record[end - 1].trim() === '') end--;
  if (end === 0) return undefined;
  const fields = new Array<string>(end);
  for (let i = 0; i < end; i++) fields[i] = record[i].replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return fields.join('\t');
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
