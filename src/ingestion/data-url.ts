import { AppError } from '../common/app-error';

export interface DataUrlContent {
  /** The declared media type without parameters; undefined when the URL declares none. */
  mime?: string;
  bytes: Buffer;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes an RFC 2397 `data:` URL (`data:[<mediatype>][;base64],<data>`). Throws a validation
 * error naming `field` when the URL is malformed, and FILE_TOO_LARGE past `maxBytes` (checked on
 * the encoded length first, so an oversized URL is never decoded).
 */
export function parseDataUrl(url: string, maxBytes: number, field = 'url'): DataUrlContent {
  const comma = url.indexOf(',');
  if (!/^data:/i.test(url) || comma < 0) {
    throw AppError.validation([{ field, reason: 'must be a data: URL of the form data:[<mediatype>][;base64],<data>' }]);
  }
  const header = url.slice('data:'.length, comma);
  const payload = url.slice(comma + 1);
  const parameters = header.split(';').map((part) => part.trim());
  const isBase64 = parameters.length > 1 && parameters[parameters.length - 1].toLowerCase() === 'base64';
  const mime = parameters[0] ? parameters[0].toLowerCase() : undefined;

  const decodedAtLeast = isBase64 ? Math.floor((payload.length * 3) / 4) - 2 : Math.ceil(payload.length / 3);
  if (decodedAtLeast > maxBytes) throw AppError.fileTooLarge(maxBytes);

  let bytes: Buffer;
  if (isBase64) {
    const compact = decodeURIComponentSafe(payload, field).replace(/\s+/g, '');
    if (!BASE64.test(compact) || compact.length % 4 === 1) {
      throw AppError.validation([{ field, reason: 'data: URL is marked base64 but its data is not valid base64' }]);
    }
    bytes = Buffer.from(compact, 'base64');
  } else {
    bytes = percentDecode(payload, field);
  }
  if (bytes.length > maxBytes) throw AppError.fileTooLarge(maxBytes);
  return { mime, bytes };
}

/** Percent-escapes stand for bytes, not characters, so a data: URL can carry any binary. */
function percentDecode(text: string, field: string): Buffer {
  const out = Buffer.allocUnsafe(Buffer.byteLength(text));
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x25 /* % */) {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) {
        throw AppError.validation([{ field, reason: `data: URL has a malformed percent-escape at character ${i}` }]);
      }
      out[length++] = parseInt(hex, 16);
      i += 2;
    } else if (code < 0x80) {
      out[length++] = code;
    } else {
      // A raw non-ASCII character: its UTF-8 bytes (surrogate pairs taken together).
      const char = String.fromCodePoint(text.codePointAt(i)!);
      length += out.write(char, length, 'utf8');
      i += char.length - 1;
    }
  }
  return out.subarray(0, length);
}

function decodeURIComponentSafe(text: string, field: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    throw AppError.validation([{ field, reason: 'data: URL has a malformed percent-escape' }]);
  }
}
