import { Workbook } from 'exceljs';
import { readFileSync } from 'node:fs';
import { fixturePath, REJECTED_FIXTURES, SEARCH_FIXTURES } from '../../../test/fixtures/fixtures';
import { expectFailure } from '../../../test/fixtures/expect-failure';
import { ErrorCode } from '../../common/app-error';
import { detectType, DetectedType } from '../detect-type';
import { extractInProcess } from './extract-in-process';

describe('extractInProcess', () => {
  it.each(SEARCH_FIXTURES.filter((f) => f.mime !== 'application/pdf').map((f) => f.file))(
    'extracts %s by its detected type',
    async (file) => {
      const bytes = readFileSync(fixturePath(file));
      const { segments } = await extractInProcess(bytes, detectType(bytes, file));
      expect(segments.length).toBeGreaterThan(0);
      expect(segments.every((s) => s.text.trim().length > 0)).toBe(true);
    },
  );

  it('drops segments without text, such as blank sheets', async () => {
    const workbook = new Workbook();
    workbook.addWorksheet('Blank');
    workbook.addWorksheet('Data').addRow(['value']);
    const bytes = Buffer.from(await workbook.xlsx.writeBuffer());
    const { segments } = await extractInProcess(bytes, detectType(bytes));
    expect(segments).toEqual([{ text: 'value', label: 'Data' }]);
  });

  it.each([
    ['an empty file', Buffer.alloc(0), { kind: 'txt', mime: 'text/plain' }],
    ['whitespace only', Buffer.from(' \r\n\t '), { kind: 'txt', mime: 'text/plain' }],
    ['an HTML page with only a script', Buffer.from('<script>alert(1)</script>'), { kind: 'html', mime: 'text/html' }],
    [
      'the empty DOCX fixture',
      readFileSync(fixturePath(REJECTED_FIXTURES.emptyDocx)),
      detectType(readFileSync(fixturePath(REJECTED_FIXTURES.emptyDocx))),
    ],
  ])('reports that %s has no text', async (_, bytes, type) => {
    const error = await expectFailure(extractInProcess(bytes, type as DetectedType), ErrorCode.EXTRACTION_FAILED);
    expect(error.message).toBe('document has no text');
  });

  it('wraps an unexpected parser failure with the format and reason', async () => {
    const error = await expectFailure(
      extractInProcess(Buffer.from([0, 1, 2, 3]), { kind: 'txt', mime: 'text/plain' }),
      ErrorCode.EXTRACTION_FAILED,
    );
    expect(error.message).toBe('TXT extraction failed: not text');
  });

  it('refuses a kind it does not know', async () => {
    await expectFailure(
      extractInProcess(Buffer.from('x'), { kind: 'rtf', mime: 'application/rtf' } as unknown as DetectedType),
      ErrorCode.UNSUPPORTED_TYPE,
    );
  });
});
