import { CellValue, Workbook } from 'exceljs';
import { AppError, ErrorCode } from '../../common/app-error';
import { readZipSafely, ZipLimits } from '../zip-guard';
import { ExtractedDocument, ExtractedSegment } from './extracted-document';

/**
 * One segment per worksheet, labelled with the sheet name: each row one line of tab-separated
 * cell values. Formula cells give their cached result, never the formula text.
 */
export async function extractXlsx(bytes: Buffer, limits: Partial<ZipLimits>): Promise<ExtractedDocument> {
  await readZipSafely(bytes, { limits });
  const workbook = new Workbook();
  try {
    // exceljs's typings want its own Buffer alias; a Node Buffer is what it reads.
    await workbook.xlsx.load(bytes as unknown as Parameters<typeof workbook.xlsx.load>[0]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new AppError(ErrorCode.EXTRACTION_FAILED, `corrupt XLSX: ${message}`, { cause: error });
  }
  const segments: ExtractedSegment[] = [];
  for (const sheet of workbook.worksheets) {
    const lines: string[] = [];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const values = row.values as CellValue[];
      const cells: string[] = [];
      for (let column = 1; column < values.length; column++) cells.push(cellText(values[column]));
      while (cells.length && cells[cells.length - 1] === '') cells.pop();
      if (cells.length) lines.push(cells.join('\t'));
    });
    segments.push({ text: lines.join('\n'), label: sheet.name });
  }
  return { segments };
}

export function cellText(value: CellValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\s+/g, ' ').trim();
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return formatDate(value);
  if ('formula' in value || 'sharedFormula' in value) return cellText(value.result as CellValue | undefined);
  if ('richText' in value) return cellText(value.richText.map((run) => run.text).join(''));
  if ('hyperlink' in value) return cellText(value.text as CellValue);
  if ('error' in value) return value.error;
  return '';
}

function formatNumber(value: number): string {
  // Binary floating point turns 0.1 + 0.2 into 0.30000000000000004; Excel shows 15 digits.
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(15)));
}

function formatDate(value: Date): string {
  const iso = value.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.replace('.000Z', 'Z');
}
