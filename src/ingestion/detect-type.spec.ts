import { readFileSync } from 'node:fs';
import { fixturePath, REJECTED_FIXTURES, SEARCH_FIXTURES } from '../../test/fixtures/fixtures';
import { writeZip } from '../../test/fixtures/zip-writer';
import { AppError, ErrorCode } from '../common/app-error';
import { detectType, DocumentKind, MIME_BY_KIND } from './detect-type';

const fixture = (file: string) => readFileSync(fixturePath(file));
const text = (value: string) => Buffer.from(value, 'utf8');

function rejection(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected detectType to throw');
}

describe('detectType', () => {
  describe('fixtures', () => {
    it.each(SEARCH_FIXTURES.map((f) => [f.file, f.mime]))('%s is %s', (file, mime) => {
      expect(detectType(fixture(file), file).mime).toBe(mime);
    });

    it.each(SEARCH_FIXTURES.filter((f) => !f.mime.startsWith('text/')).map((f) => f.file))(
      '%s is recognised by its bytes alone, whatever its name and declared type',
      (file) => {
        const expected = detectType(fixture(file), file);
        expect(detectType(fixture(file))).toEqual(expected);
        expect(detectType(fixture(file), 'notes.txt', 'text/plain')).toEqual(expected);
      },
    );
  });

  it('tells the OOXML formats apart by their zip entries', () => {
    expect(detectType(fixture('sourdough.docx'), 'report.xlsx').kind).toBe('docx');
    expect(detectType(fixture('marathon.xlsx'), 'slides.pptx').kind).toBe('xlsx');
    expect(detectType(fixture('chess.pptx'), 'letter.docx').kind).toBe('pptx');
  });

  it('finds a PDF header preceded by junk, as PDF readers do', () => {
    expect(detectType(Buffer.concat([text('\n\n garbage '), fixture('volcanoes.pdf')])).kind).toBe('pdf');
  });

  const textCases: Array<[string, string, string | undefined, string | undefined, DocumentKind]> = [
    ['extension first', 'a,b\n1,2\n', 'data.csv', undefined, 'csv'],
    ['TSV as CSV', 'a\tb\n1\t2\n', 'data.tsv', undefined, 'csv'],
    ['extension beats Content-Type', '# Title\n', 'README.md', 'text/csv', 'md'],
    ['Content-Type when the name says nothing', 'a,b\n1,2\n', 'upload', 'text/csv; charset=utf-8', 'csv'],
    ['Content-Type with parameters', '{"a":1}', undefined, 'application/json; charset=utf-8', 'json'],
    ['structured JSON Content-Type', '{"@id":"x"}', undefined, 'application/ld+json', 'json'],
    ['HTML by Content-Type', '<p>hi</p>', undefined, 'text/html', 'html'],
    ['HTML sniffed from a doctype', '\n<!DOCTYPE html><html><body>x</body></html>', undefined, undefined, 'html'],
    ['HTML sniffed from <html>', '<html lang="en"><p>x</p></html>', undefined, 'application/octet-stream', 'html'],
    ['JSON object sniffed', ' {"a": [1, 2]}\n', undefined, undefined, 'json'],
    ['JSON array sniffed', '[1, 2, 3]', undefined, undefined, 'json'],
    ['braces that are not JSON', '{ draft notes', undefined, undefined, 'txt'],
    ['plain text by default', 'Just some words.', undefined, undefined, 'txt'],
    ['unknown extension falls through to Content-Type', 'x', 'notes.weird', 'text/markdown', 'md'],
    ['a text kind is never taken from a binary extension', 'plain words', 'fake.pdf', undefined, 'txt'],
  ];

  it.each(textCases)('%s', (_, content, name, contentType, kind) => {
    expect(detectType(text(content), name, contentType)).toEqual({ kind, mime: MIME_BY_KIND[kind] });
  });

  it('accepts text in UTF-8 with a BOM, UTF-16 with a BOM and legacy 8-bit encodings', () => {
    expect(detectType(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text('{"a":1}')])).kind).toBe('json');
    expect(detectType(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello, world', 'utf16le')])).kind).toBe('txt');
    expect(detectType(Buffer.from('caf\xe9 cr\xe8me br\xfbl\xe9e', 'latin1'), 'menu.txt').kind).toBe('txt');
  });

  const unsupported: Array<[string, Buffer, string | undefined, string]> = [
    ['a PNG image, whatever its name', fixture(REJECTED_FIXTURES.png), 'photo.txt', 'image/png'],
    ['a JPEG image', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]), undefined, 'image/jpeg'],
    ['a gzip file', Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]), 'data.csv', 'application/gzip'],
    ['an ELF executable', Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(64)]), undefined, 'ELF'],
    [
      'a Windows executable',
      Buffer.concat([text('MZ'), Buffer.alloc(64), text('This program cannot be run in DOS mode')]),
      'setup.exe',
      'binary data',
    ],
    ['a legacy Office file', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]), 'old.doc', 'OLE2'],
    ['random bytes', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)), undefined, 'binary data'],
    ['text with a NUL byte', text('hello\0world'), 'notes.txt', 'binary data'],
    ['a plain zip', writeZip([{ name: 'notes.txt', data: 'hello' }]), 'archive.docx', 'zip archive'],
    ['a zip without a central directory', writeZip([{ name: 'a.txt', data: 'hello' }]).subarray(0, 40), undefined, 'unreadable zip'],
  ];

  it.each(unsupported)('refuses %s', (_, bytes, name, reason) => {
    const error = rejection(() => detectType(bytes, name, 'text/plain'));
    expect(error.code).toBe(ErrorCode.UNSUPPORTED_TYPE);
    expect(error.message).toMatch(/^unsupported type: /);
    expect(error.message).toContain(reason);
  });

  it('refuses an OOXML-looking zip that has no main document part', () => {
    const bytes = writeZip([
      { name: '[Content_Types].xml', data: '<Types/>' },
      { name: 'word/styles.xml', data: '<styles/>' },
    ]);
    expect(rejection(() => detectType(bytes, 'a.docx')).code).toBe(ErrorCode.UNSUPPORTED_TYPE);
  });
});
