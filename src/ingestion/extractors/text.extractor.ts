import { ExtractedDocument } from './extracted-document';
import { decodeText } from './text-decoding';

export function extractPlainText(bytes: Buffer): ExtractedDocument {
  return { segments: [{ text: decodeText(bytes) }] };
}

/**
 * Re-indents parsed JSON so that minified documents get line and word boundaries to chunk on;
 * text that does not parse is kept as it is.
 */
export function extractJson(bytes: Buffer): ExtractedDocument {
  const text = decodeText(bytes);
  try {
    return { segments: [{ text: JSON.stringify(JSON.parse(text), null, 2) }] };
  } catch {
    return { segments: [{ text }] };
  }
}
