import { getDocumentProxy } from 'unpdf';
import { AppError, ErrorCode } from '../../common/app-error';
import { ExtractedDocument, ExtractedSegment, PAGE_PROGRESS_EVERY_MS } from './extracted-document';

/** A vertical gap this many times the font size between two lines reads as a paragraph break. */
const PARAGRAPH_GAP = 1.8;

interface TextItemLike {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

/**
 * One segment per page, page numbers kept. Pages are read one at a time and released, so memory
 * stays flat on long documents (unpdf's own extractText loads every page at once).
 */
export async function extractPdf(
  bytes: Buffer,
  options: { maxPages?: number; onPages?: (done: number, total: number) => void } = {},
): Promise<ExtractedDocument> {
  const data = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // verbosity 0: pdf.js would otherwise print a warning line per oddity in the file.
  const pdf = await getDocumentProxy(data, { verbosity: 0 }).catch((error) => {
    throw pdfError(error);
  });
  try {
    // Known from the page tree without reading a page: a long document is refused before the long part.
    if (options.maxPages !== undefined && pdf.numPages > options.maxPages) {
      throw new AppError(ErrorCode.FILE_TOO_LARGE, `the PDF has ${pdf.numPages} pages, more than the ${options.maxPages} of this lane`, {
        details: { laneLimit: { pages: pdf.numPages, maxPages: options.maxPages } },
      });
    }
    const segments: ExtractedSegment[] = [];
    let reportedAt = Date.now();
    for (let pageNumber = 1; pageNumber <= pdf.numPages; pageNumber++) {
      const page = await pdf.getPage(pageNumber);
      const content = await page.getTextContent();
      segments.push({ text: pageText(content.items as unknown[]), page: pageNumber });
      page.cleanup();
      if (options.onPages && Date.now() - reportedAt >= PAGE_PROGRESS_EVERY_MS) {
        reportedAt = Date.now();
        options.onPages(pageNumber, pdf.numPages);
      }
    }
    options.onPages?.(pdf.numPages, pdf.numPages);
    return { segments, info: { pages: pdf.numPages, ...(await documentInfo(pdf)) } };
  } catch (error) {
    throw pdfError(error);
  } finally {
    await pdf.destroy();
  }
}

/** Title and Author of the PDF's document information dictionary, when set; a broken one is no failure. */
async function documentInfo(pdf: { getMetadata(): Promise<{ info: unknown }> }): Promise<{ title?: string; author?: string }> {
  const info = (await pdf.getMetadata().catch(() => ({ info: {} }))).info as { Title?: unknown; Author?: unknown } | undefined;
  const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim().slice(0, MAX_INFO_CHARS) : undefined);
  const title = text(info?.Title);
  const author = text(info?.Author);
  return { ...(title ? { title } : {}), ...(author ? { author } : {}) };
}

const MAX_INFO_CHARS = 1024;

function pageText(items: unknown[]): string {
  const parts: string[] = [];
  let lineStart = true;
  let previousLineY: number | undefined;
  let lineY = 0;
  for (const raw of items) {
    // Marked-content items carry no text.
    if (typeof raw !== 'object' || raw === null || !('str' in raw)) continue;
    const item = raw as TextItemLike;
    if (lineStart && item.str.trim()) {
      const y = item.transform[5];
      const size = Math.hypot(item.transform[2], item.transform[3]) || item.height;
      if (previousLineY !== undefined && size > 0 && Math.abs(previousLineY - y) > PARAGRAPH_GAP * size) parts.push('\n');
      lineY = y;
      lineStart = false;
    }
    parts.push(item.str);
    if (item.hasEOL) {
      parts.push('\n');
      if (!lineStart) previousLineY = lineY;
      lineStart = true;
    }
  }
  return parts.join('');
}

function pdfError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'PasswordException') {
    return new AppError(ErrorCode.EXTRACTION_FAILED, 'encrypted PDF: a password is required', { cause: error });
  }
  return new AppError(ErrorCode.EXTRACTION_FAILED, `corrupt PDF: ${message}`, { cause: error });
}
