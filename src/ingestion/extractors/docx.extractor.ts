import mammoth from 'mammoth';
import { AppError, ErrorCode } from '../../common/app-error';
import { readZipSafely, ZipLimits } from '../zip-guard';
import { ExtractedDocument } from './extracted-document';

/** Body text of a Word document, paragraphs separated by blank lines (mammoth's raw text). */
export async function extractDocx(bytes: Buffer, limits: Partial<ZipLimits>): Promise<ExtractedDocument> {
  await readZipSafely(bytes, { limits });
  try {
    const { value } = await mammoth.extractRawText({ buffer: bytes });
    return { segments: [{ text: value }] };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new AppError(ErrorCode.EXTRACTION_FAILED, `corrupt DOCX: ${message}`, { cause: error });
  }
}
