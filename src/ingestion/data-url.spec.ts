import { ErrorCode } from '../common/app-error';
import { parseDataUrl } from './data-url';

describe('parseDataUrl', () => {
  it('decodes base64 with its media type, parameters dropped', () => {
    const { mime, bytes } = parseDataUrl(`data:Text/Plain;charset=utf-8;base64,${Buffer.from('héllo').toString('base64')}`, 100);
    expect(mime).toBe('text/plain');
    expect(bytes.toString('utf8')).toBe('héllo');
  });

  it('decodes percent-escapes as bytes, so binary survives', () => {
    expect([...parseDataUrl('data:application/octet-stream,%00%FFa%20b', 100).bytes]).toEqual([0, 255, 97, 32, 98]);
  });

  it('reads a URL without a media type and keeps raw non-ASCII as UTF-8', () => {
    const { mime, bytes } = parseDataUrl('data:,caf\u00e9 \u{1F600}', 100);
    expect(mime).toBeUndefined();
    expect(bytes.toString('utf8')).toBe('caf\u00e9 \u{1F600}');
  });

  it('accepts whitespace inside base64 data', () => {
    expect(parseDataUrl('data:text/plain;base64,aGVs\n bG8=', 100).bytes.toString()).toBe('hello');
  });

  it.each([
    ['no comma', 'data:text/plain;base64'],
    ['not a data URL', 'http://example.com/,x'],
    ['invalid base64', 'data:;base64,ab$d'],
    ['base64 of impossible length', 'data:;base64,abcde'],
    ['a broken percent-escape', 'data:,100%'],
  ])('refuses %s as a validation error on the field', (_case, url) => {
    expect(() => parseDataUrl(url, 100, 'url')).toThrow(expect.objectContaining({ code: ErrorCode.VALIDATION_FAILED }));
  });

  it('refuses data past the cap, before decoding a huge payload', () => {
    expect(() => parseDataUrl(`data:;base64,${'A'.repeat(4000)}`, 100)).toThrow(
      expect.objectContaining({ code: ErrorCode.FILE_TOO_LARGE }),
    );
    expect(() => parseDataUrl(`data:,${'a'.repeat(101)}`, 100)).toThrow(expect.objectContaining({ code: ErrorCode.FILE_TOO_LARGE }));
    expect(parseDataUrl(`data:,${'a'.repeat(100)}`, 100).bytes).toHaveLength(100);
  });
});
