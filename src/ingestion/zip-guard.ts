import yauzl, { Entry, ZipFile } from 'yauzl';
import { AppError, ErrorCode } from '../common/app-error';

/**
 * Limits for reading an untrusted zip (OOXML documents are zips). Declared sizes in the central
 * directory are checked before anything is inflated, and actual bytes are counted while
 * inflating, because a crafted archive can declare small sizes and still inflate to gigabytes.
 */
export interface ZipLimits {
  /** Total bytes all entries together may inflate to. */
  maxDecompressedBytes: number;
  maxEntries: number;
  /** Largest uncompressed : compressed ratio allowed for one entry bigger than `ratioFloorBytes`. */
  maxRatio: number;
  ratioFloorBytes: number;
}

export const DEFAULT_ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxDecompressedBytes: 200 * 1024 * 1024,
  maxEntries: 10_000,
  maxRatio: 100,
  ratioFloorBytes: 1024 * 1024,
});

export interface ReadZipOptions {
  limits?: Partial<ZipLimits>;
  /** Entries whose inflated contents are returned; every other entry is inflated only to be counted. */
  keep?: (name: string) => boolean;
}

const EOCD_SIGNATURE = 0x06054b50;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_EOCD_SIGNATURE = 0x06064b50;
const CENTRAL_HEADER_SIGNATURE = 0x02014b50;
const EOCD_SIZE = 22;
const MAX_COMMENT = 0xffff;

/**
 * Entry names from a zip's central directory, read synchronously so type detection can stay
 * synchronous. Nothing is inflated. Returns undefined when the bytes hold no readable directory.
 */
export function zipEntryNames(bytes: Buffer, maxNames = DEFAULT_ZIP_LIMITS.maxEntries + 1): string[] | undefined {
  const eocd = findEndOfCentralDirectory(bytes);
  if (eocd < 0) return undefined;
  let count = bytes.readUInt16LE(eocd + 10);
  let offset = bytes.readUInt32LE(eocd + 16);
  if ((count === 0xffff || offset === 0xffffffff) && eocd >= 20 && bytes.readUInt32LE(eocd - 20) === ZIP64_LOCATOR_SIGNATURE) {
    const zip64 = Number(bytes.readBigUInt64LE(eocd - 12));
    if (zip64 + 56 > bytes.length || bytes.readUInt32LE(zip64) !== ZIP64_EOCD_SIGNATURE) return undefined;
    count = Number(bytes.readBigUInt64LE(zip64 + 32));
    offset = Number(bytes.readBigUInt64LE(zip64 + 48));
  }
  const names: string[] = [];
  for (let i = 0; i < count && names.length < maxNames; i++) {
    if (offset + 46 > bytes.length || bytes.readUInt32LE(offset) !== CENTRAL_HEADER_SIGNATURE) return undefined;
    const nameLength = bytes.readUInt16LE(offset + 28);
    const extraLength = bytes.readUInt16LE(offset + 30);
    const commentLength = bytes.readUInt16LE(offset + 32);
    if (offset + 46 + nameLength > bytes.length) return undefined;
    names.push(bytes.toString('utf8', offset + 46, offset + 46 + nameLength));
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return names;
}

function findEndOfCentralDirectory(bytes: Buffer): number {
  const last = bytes.length - EOCD_SIZE;
  const first = Math.max(0, last - MAX_COMMENT);
  for (let i = last; i >= first; i--) {
    if (bytes.readUInt32LE(i) === EOCD_SIGNATURE && i + EOCD_SIZE + bytes.readUInt16LE(i + 20) === bytes.length) return i;
  }
  return -1;
}

/**
 * Inflates an untrusted zip within `limits` and returns the entries `keep` selects. Every entry
 * is inflated (and discarded unless kept) so that an archive which passes this check is known to
 * be safe to hand to a library that inflates it again without limits (mammoth, exceljs).
 * Throws AppError EXTRACTION_FAILED: 'zip bomb: ...' or 'corrupt archive: ...'.
 */
export async function readZipSafely(bytes: Buffer, options: ReadZipOptions = {}): Promise<Map<string, Buffer>> {
  const limits: ZipLimits = { ...DEFAULT_ZIP_LIMITS, ...options.limits };
  const keep = options.keep ?? (() => false);
  const zip = await openZip(bytes);
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw bomb(`archive has ${zip.entryCount} entries, more than ${limits.maxEntries}`);
    }
    const entries = await readCentralDirectory(zip);
    checkDeclaredSizes(entries, limits);
    const kept = new Map<string, Buffer>();
    let inflated = 0;
    for (const entry of entries) {
      if (entry.fileName.endsWith('/')) continue;
      const keepIt = keep(entry.fileName);
      const chunks: Buffer[] = [];
      await inflateEntry(zip, entry, (chunk) => {
        inflated += chunk.length;
        if (inflated > limits.maxDecompressedBytes) {
          throw bomb(`decompressed size exceeds ${formatBytes(limits.maxDecompressedBytes)}`);
        }
        if (keepIt) chunks.push(chunk);
      });
      if (keepIt) kept.set(entry.fileName, Buffer.concat(chunks));
    }
    return kept;
  } finally {
    zip.close();
  }
}

function checkDeclaredSizes(entries: Entry[], limits: ZipLimits): void {
  let declared = 0;
  for (const entry of entries) {
    declared += entry.uncompressedSize;
    if (declared > limits.maxDecompressedBytes) {
      throw bomb(`declared decompressed size exceeds ${formatBytes(limits.maxDecompressedBytes)}`);
    }
    if (entry.uncompressedSize > limits.ratioFloorBytes && entry.uncompressedSize > limits.maxRatio * Math.max(1, entry.compressedSize)) {
      throw bomb(`entry ${entry.fileName} expands more than ${limits.maxRatio}:1`);
    }
  }
}

function openZip(bytes: Buffer): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) reject(corrupt(err));
      else resolve(zip);
    });
  });
}

function readCentralDirectory(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', (err: unknown) => reject(corrupt(err)));
    zip.readEntry();
  });
}

function inflateEntry(zip: ZipFile, entry: Entry, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream) return reject(corrupt(err));
      let failed = false;
      const fail = (error: unknown) => {
        if (failed) return;
        failed = true;
        stream.destroy();
        reject(error instanceof AppError ? error : entryError(entry, error));
      };
      stream.on('data', (chunk: Buffer) => {
        if (failed) return;
        try {
          onChunk(chunk);
        } catch (error) {
          fail(error);
        }
      });
      stream.once('error', fail);
      stream.once('end', () => {
        if (!failed) resolve();
      });
    });
  });
}

/** yauzl reports an entry that inflates past its declared size as "too many bytes in the stream". */
function entryError(entry: Entry, error: unknown): AppError {
  const message = error instanceof Error ? error.message : String(error);
  if (/too many bytes/i.test(message)) {
    return bomb(`entry ${entry.fileName} inflates beyond its declared size`);
  }
  return corrupt(error, entry.fileName);
}

function bomb(reason: string): AppError {
  return new AppError(ErrorCode.EXTRACTION_FAILED, `zip bomb: ${reason}`);
}

function corrupt(error: unknown, entryName?: string): AppError {
  const message = error instanceof Error ? error.message : String(error ?? 'unreadable');
  return new AppError(ErrorCode.EXTRACTION_FAILED, `corrupt archive: ${entryName ? `${entryName}: ` : ''}${message}`, { cause: error });
}

function formatBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return Number.isInteger(mb) ? `${mb} MB` : `${bytes} bytes`;
}
