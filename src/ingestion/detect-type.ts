import { AppError, ErrorCode } from '../common/app-error';
import { decodeText, isText } from './extractors/text-decoding';
import { zipEntryNames } from './zip-guard';

export type DocumentKind = 'pdf' | 'docx' | 'xlsx' | 'pptx' | 'csv' | 'html' | 'txt' | 'md' | 'json';

export interface DetectedType {
  kind: DocumentKind;
  mime: string;
}

export const MIME_BY_KIND: Readonly<Record<DocumentKind, string>> = Object.freeze({
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  csv: 'text/csv',
  html: 'text/html',
  txt: 'text/plain',
  md: 'text/markdown',
  json: 'application/json',
});

type TextKind = Extract<DocumentKind, 'csv' | 'html' | 'txt' | 'md' | 'json'>;

const TEXT_KIND_BY_EXTENSION: Readonly<Record<string, TextKind>> = {
  csv: 'csv',
  tsv: 'csv',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  txt: 'txt',
  text: 'txt',
  log: 'txt',
  md: 'md',
  markdown: 'md',
  json: 'json',
};

const TEXT_KIND_BY_MIME: Readonly<Record<string, TextKind>> = {
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/x-markdown': 'md',
  'application/json': 'json',
  'text/json': 'json',
};

/**
 * Known binary formats, named so the refusal tells the user what they sent. Only signatures no
 * text file can start with; anything else binary is caught by the text check.
 */
const BINARY_SIGNATURES: ReadonlyArray<{ magic: number[]; name: string }> = [
  { magic: [0x89, 0x50, 0x4e, 0x47], name: 'image/png' },
  { magic: [0xff, 0xd8, 0xff], name: 'image/jpeg' },
  { magic: [0x47, 0x49, 0x46, 0x38, 0x39, 0x61], name: 'image/gif' },
  { magic: [0x47, 0x49, 0x46, 0x38, 0x37, 0x61], name: 'image/gif' },
  { magic: [0x1f, 0x8b], name: 'application/gzip' },
  { magic: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], name: 'legacy Microsoft Office document (OLE2)' },
  { magic: [0x7f, 0x45, 0x4c, 0x46], name: 'executable (ELF)' },
];

/** The PDF specification lets readers find the header within the first kilobyte. */
const PDF_HEADER_WINDOW = 1024;

/**
 * Decides what a file is from its bytes first (magic numbers; the entries of an OOXML zip), and
 * only for text falls back to the file name's extension, then the declared Content-Type, then a
 * look at the text itself. Throws AppError UNSUPPORTED_TYPE for anything it cannot extract.
 */
export function detectType(bytes: Buffer, name?: string, contentType?: string): DetectedType {
  const binary = detectBinary(bytes);
  if (binary) return typed(binary);
  for (const { magic, name: what } of BINARY_SIGNATURES) {
    if (startsWith(bytes, magic)) throw unsupported(what, name, contentType);
  }
  if (!isText(bytes)) throw unsupported('binary data', name, contentType);
  return typed(textKindFromName(name) ?? textKindFromMime(contentType) ?? sniffTextKind(bytes));
}

function detectBinary(bytes: Buffer): DocumentKind | undefined {
  const pdfAt = bytes.subarray(0, PDF_HEADER_WINDOW).indexOf('%PDF-');
  if (pdfAt !== -1) return 'pdf';
  if (!startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) && !startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) return undefined;
  const names = zipEntryNames(bytes);
  if (!names) throw new AppError(ErrorCode.UNSUPPORTED_TYPE, 'unsupported type: unreadable zip archive');
  const has = new Set(names);
  if (has.has('[Content_Types].xml')) {
    if (has.has('word/document.xml')) return 'docx';
    if (has.has('xl/workbook.xml')) return 'xlsx';
    if (has.has('ppt/presentation.xml')) return 'pptx';
  }
  throw new AppError(ErrorCode.UNSUPPORTED_TYPE, 'unsupported type: zip archive that is not a DOCX, XLSX or PPTX document');
}

function textKindFromName(name: string | undefined): TextKind | undefined {
  const dot = name?.lastIndexOf('.') ?? -1;
  if (!name || dot < 0) return undefined;
  return TEXT_KIND_BY_EXTENSION[name.slice(dot + 1).toLowerCase()];
}

function textKindFromMime(contentType: string | undefined): TextKind | undefined {
  const mime = contentType?.split(';')[0].trim().toLowerCase();
  if (!mime) return undefined;
  return TEXT_KIND_BY_MIME[mime] ?? (mime.endsWith('+json') ? 'json' : undefined);
}

function sniffTextKind(bytes: Buffer): TextKind {
  const head = decodeHead(bytes).trimStart();
  if (/^(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(head)) return 'html';
  const first = head[0];
  if (first === '{' || first === '[') {
    const tail = bytes
      .subarray(Math.max(0, bytes.length - 64))
      .toString('latin1')
      .replace(/\0/g, '')
      .trimEnd();
    const last = tail[tail.length - 1];
    if ((first === '{' && last === '}') || (first === '[' && last === ']')) return 'json';
  }
  return 'txt';
}

function decodeHead(bytes: Buffer): string {
  try {
    return decodeText(bytes.subarray(0, 1024));
  } catch {
    // The first kilobyte alone can fail the text check the whole file passed; it then names no kind.
    return '';
  }
}

function typed(kind: DocumentKind): DetectedType {
  return { kind, mime: MIME_BY_KIND[kind] };
}

function startsWith(bytes: Buffer, magic: number[]): boolean {
  if (bytes.length < magic.length) return false;
  return magic.every((byte, i) => bytes[i] === byte);
}

function unsupported(what: string, name: string | undefined, contentType: string | undefined): AppError {
  return new AppError(ErrorCode.UNSUPPORTED_TYPE, `unsupported type: ${what}`, {
    details: { name, contentType },
  });
}
