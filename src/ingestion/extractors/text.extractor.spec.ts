import { extractJson, extractPlainText } from './text.extractor';
import { decodeText, isText } from './text-decoding';

describe('text extraction', () => {
  it('keeps plain text as it is, without a UTF-8 BOM', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('# Notes\n\nSome *markdown*.')]);
    expect(extractPlainText(bytes).segments).toEqual([{ text: '# Notes\n\nSome *markdown*.' }]);
  });

  it('re-indents JSON so a minified document gets line and word boundaries', () => {
    const { segments } = extractJson(Buffer.from('{"name":"Ada","tags":["math","engines"]}'));
    expect(segments[0].text).toBe('{\n  "name": "Ada",\n  "tags": [\n    "math",\n    "engines"\n  ]\n}');
  });

  it('keeps JSON that does not parse as text', () => {
    expect(extractJson(Buffer.from('{"broken": ')).segments[0].text).toBe('{"broken": ');
  });
});

describe('text decoding', () => {
  it('decodes UTF-16 with either byte order mark', () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo', 'utf16le')]);
    const be = Buffer.from(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('héllo', 'utf16le').swap16()]));
    expect(decodeText(le)).toBe('héllo');
    expect(decodeText(be)).toBe('héllo');
  });

  it('reads bytes that are not UTF-8 as Windows-1252', () => {
    expect(decodeText(Buffer.from([0x93, 0x63, 0x61, 0x66, 0xe9, 0x94]))).toBe('\u201ccaf\u00e9\u201d');
  });

  it('tells binary from text', () => {
    expect(isText(Buffer.from('tabs\tand\r\nnewlines and \x1b[1mANSI\x1b[0m colours'))).toBe(true);
    expect(isText(Buffer.from([0x41, 0x00, 0x42]))).toBe(false);
    expect(isText(Buffer.from(Array.from({ length: 200 }, (_, i) => (i % 31) + 1)))).toBe(false);
    expect(() => decodeText(Buffer.from([0, 1, 2]))).toThrow('not text');
  });
});
