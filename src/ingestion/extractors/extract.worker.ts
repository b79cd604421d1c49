import { parentPort } from 'node:worker_threads';
import { AppError, ErrorCode } from '../../common/app-error';
import { extractInProcess } from './extract-in-process';
import type { ExtractRequest, ExtractResponse } from './extractor-pool';

/** Entry point of an extraction worker thread: one job at a time, as `ExtractorPool` sends them. */
parentPort?.on('message', async (request: ExtractRequest) => {
  let response: ExtractResponse;
  try {
    const document = await extractInProcess(Buffer.from(request.bytes), request.type, request.options);
    response = { ok: true, document };
  } catch (error) {
    const failure =
      error instanceof AppError
        ? error
        : new AppError(ErrorCode.EXTRACTION_FAILED, `extraction failed: ${error instanceof Error ? error.message : String(error)}`);
    response = { ok: false, error: { code: failure.code, message: failure.message, details: failure.details } };
  }
  parentPort!.postMessage(response);
});
