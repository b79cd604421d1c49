import { AppError, ErrorCode } from '../../common/app-error';
import { extractInProcess } from './extract-in-process';
import type { ExtractRequest, ExtractResponse } from './extractor-pool';

/**
 * Entry point of an extraction worker thread, one job at a time as `ExtractorPool` hands them out.
 * It answers every failure of the file itself, so that the pool reads a rejected task as a thread
 * that died.
 */
export default async function extract(request: ExtractRequest): Promise<ExtractResponse> {
  const pages = request.pages;
  try {
    const onPages = pages ? (done: number, total: number) => pages.postMessage({ done, total }) : undefined;
    const document = await extractInProcess(Buffer.from(request.bytes), request.type, { ...request.options, onPages });
    return { ok: true, document };
  } catch (error) {
    const failure =
      error instanceof AppError
        ? error
        : new AppError(ErrorCode.EXTRACTION_FAILED, `extraction failed: ${error instanceof Error ? error.message : String(error)}`);
    return { ok: false, error: { code: failure.code, message: failure.message, details: failure.details } };
  } finally {
    pages?.close();
  }
}
