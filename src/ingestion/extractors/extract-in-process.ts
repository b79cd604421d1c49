import { AppError, ErrorCode } from '../../common/app-error';
import { DetectedType } from '../detect-type';
import { ZipLimits } from '../zip-guard';
import { ExtractedDocument, ExtractOptions } from './extracted-document';

/**
 * Extracts the text of a detected document on the calling thread. The service calls it only
 * inside the extraction workers (`ExtractorPool`); parsing untrusted files on the event loop
 * would stall every request. Throws AppError EXTRACTION_FAILED with a readable reason.
 *
 * PDF support loads pdf.js as an ES module, which plain Node does but jest's CommonJS sandbox
 * cannot: under jest, PDF goes through the pool.
 */
export async function extractInProcess(bytes: Buffer, type: DetectedType, opts: ExtractOptions = {}): Promise<ExtractedDocument> {
  const limits: Partial<ZipLimits> = opts.maxDecompressedBytes === undefined ? {} : { maxDecompressedBytes: opts.maxDecompressedBytes };
  let document: ExtractedDocument;
  try {
    document = await extractByKind(bytes, type, limits, opts);
  } catch (error) {
    if (error instanceof AppError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new AppError(ErrorCode.EXTRACTION_FAILED, `${type.kind.toUpperCase()} extraction failed: ${message}`, {
      cause: error,
    });
  }
  const segments = document.segments.filter((segment) => /\S/.test(segment.text));
  if (segments.length === 0) throw new AppError(ErrorCode.EXTRACTION_FAILED, 'document has no text');
  return { segments, ...(document.info ? { info: document.info } : {}) };
}

/**
 * Each format's parser is loaded on first use: a fresh worker (one replaces every worker that
 * timed out) then pays only for the libraries its job needs; exceljs alone takes a quarter second.
 */
async function extractByKind(
  bytes: Buffer,
  type: DetectedType,
  limits: Partial<ZipLimits>,
  opts: ExtractOptions,
): Promise<ExtractedDocument> {
  switch (type.kind) {
    case 'pdf':
      return (await import('./pdf.extractor')).extractPdf(bytes, { maxPages: opts.maxPages, onPages: opts.onPages });
    case 'docx':
      return (await import('./docx.extractor')).extractDocx(bytes, limits);
    case 'xlsx':
      return (await import('./xlsx.extractor')).extractXlsx(bytes, limits);
    case 'pptx':
      return (await import('./pptx.extractor')).extractPptx(bytes, limits);
    case 'csv':
      return (await import('./csv.extractor')).extractCsv(bytes);
    case 'html':
      return (await import('./html.extractor')).extractHtml(bytes);
    case 'json':
      return (await import('./text.extractor')).extractJson(bytes);
    case 'txt':
    case 'md':
      return (await import('./text.extractor')).extractPlainText(bytes);
    default:
      throw new AppError(ErrorCode.UNSUPPORTED_TYPE, `unsupported type: ${String((type as DetectedType).kind)}`);
  }
}
