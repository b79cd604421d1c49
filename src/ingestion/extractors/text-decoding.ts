import { isUtf8 } from 'node:buffer';

/** How much of a file is inspected to tell text from binary; enough for any real header. */
const SAMPLE_BYTES = 64 * 1024;
/** Text files have few control characters besides tab, newline, carriage return and form feed. */
const MAX_CONTROL_RATIO = 0.01;

type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

interface Sniffed {
  encoding: Encoding;
  bomLength: number;
}

/**
 * Whether the bytes are text this service can read: UTF-8 (with or without BOM), UTF-16 with a BOM,
 * or legacy 8-bit text; never anything holding NUL bytes or many control characters.
 */
export function isText(bytes: Buffer): boolean {
  return sniffEncoding(bytes) !== undefined;
}

/** Decodes text detected by `isText`; throws on binary input. */
export function decodeText(bytes: Buffer): string {
  const sniffed = sniffEncoding(bytes);
  if (!sniffed) throw new Error('not text');
  const body = bytes.subarray(sniffed.bomLength);
  switch (sniffed.encoding) {
    case 'utf-8':
      return body.toString('utf8');
    case 'utf-16le':
      return body.toString('utf16le');
    case 'utf-16be':
      return new TextDecoder('utf-16be').decode(body);
    case 'windows-1252':
      return decodeWindows1252(body);
  }
}

/**
 * Windows-1252 differs from Latin-1 only in 0x80-0x9F (curly quotes, dashes, the euro sign).
 * Decoded by hand because Node 20's TextDecoder treats this label as plain Latin-1.
 */
const WINDOWS_1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decodeWindows1252(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/[\u0080-\u009f]/g, (ch) => WINDOWS_1252_HIGH[ch.charCodeAt(0) - 0x80]);
}

function sniffEncoding(bytes: Buffer): Sniffed | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return utf16(bytes, 'utf-16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return utf16(bytes, 'utf-16be');
  const bomLength = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  if (bytes.indexOf(0) !== -1) return undefined;
  if (controlRatio(bytes.subarray(bomLength, bomLength + SAMPLE_BYTES)) > MAX_CONTROL_RATIO) return undefined;
  return { encoding: isUtf8(bytes.subarray(bomLength)) ? 'utf-8' : 'windows-1252', bomLength };
}

function utf16(bytes: Buffer, encoding: 'utf-16le' | 'utf-16be'): Sniffed | undefined {
  if ((bytes.length - 2) % 2 !== 0) return undefined;
  const sample = new TextDecoder(encoding).decode(bytes.subarray(2, 2 + SAMPLE_BYTES));
  if (sample.includes('\0')) return undefined;
  let controls = 0;
  for (let i = 0; i < sample.length; i++) if (isControl(sample.charCodeAt(i))) controls++;
  return controls > sample.length * MAX_CONTROL_RATIO ? undefined : { encoding, bomLength: 2 };
}

function controlRatio(sample: Uint8Array): number {
  if (sample.length === 0) return 0;
  let controls = 0;
  for (let i = 0; i < sample.length; i++) if (isControl(sample[i])) controls++;
  return controls / sample.length;
}

function isControl(code: number): boolean {
  // Tab, LF, VT, FF, CR and ESC (ANSI colours in logs) occur in real text files.
  return (code < 0x20 && !(code >= 0x09 && code <= 0x0d) && code !== 0x1b) || code === 0x7f;
}
