import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fixturePath, REJECTED_FIXTURES } from '../../test/fixtures/fixtures';
import { writeZip, ZipEntryInput } from '../../test/fixtures/zip-writer';
import { AppError, ErrorCode } from '../common/app-error';
import { readZipSafely, zipEntryNames } from './zip-guard';

const MB = 1024 * 1024;

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(ErrorCode.EXTRACTION_FAILED);
  return error as AppError;
}

describe('zipEntryNames', () => {
  it('lists the central directory without inflating anything', () => {
    expect(zipEntryNames(readFileSync(fixturePath('sourdough.docx')))).toEqual(['[Content_Types].xml', '_rels/.rels', 'word/document.xml']);
  });

  it('returns undefined for bytes that hold no zip directory', () => {
    expect(zipEntryNames(Buffer.from('PK\x03\x04 not really a zip'))).toBeUndefined();
    expect(zipEntryNames(Buffer.alloc(0))).toBeUndefined();
  });

  it('stops listing after the given number of names', () => {
    const zip = writeZip(Array.from({ length: 50 }, (_, i) => ({ name: `f${i}.txt`, data: '' })));
    expect(zipEntryNames(zip, 10)).toHaveLength(10);
  });
});

describe('readZipSafely', () => {
  it('returns the entries asked for and inflates the rest only to count them', async () => {
    const zip = writeZip([
      { name: 'keep/a.xml', data: '<a>first</a>' },
      { name: 'skip/b.bin', data: randomBytes(1000) },
      { name: 'keep/c.xml', data: '<c>third</c>', deflate: false },
    ]);
    const kept = await readZipSafely(zip, { keep: (name) => name.startsWith('keep/') });
    expect([...kept.keys()]).toEqual(['keep/a.xml', 'keep/c.xml']);
    expect(kept.get('keep/a.xml')!.toString()).toBe('<a>first</a>');
    expect(kept.get('keep/c.xml')!.toString()).toBe('<c>third</c>');
  });

  it('refuses the committed zip-bomb fixture from its declared sizes', async () => {
    const error = await failure(readZipSafely(readFileSync(fixturePath(REJECTED_FIXTURES.zipBombDocx))));
    expect(error.message).toBe('zip bomb: declared decompressed size exceeds 200 MB');
  });

  it('refuses when the declared total passes a configured cap', async () => {
    const zip = writeZip([
      { name: 'a.bin', data: randomBytes(60_000) },
      { name: 'b.bin', data: randomBytes(60_000) },
    ]);
    await expect(readZipSafely(zip, { limits: { maxDecompressedBytes: 150_000 } })).resolves.toBeDefined();
    const error = await failure(readZipSafely(zip, { limits: { maxDecompressedBytes: 100_000 } }));
    expect(error.message).toBe('zip bomb: declared decompressed size exceeds 100000 bytes');
  });

  it('refuses an entry over 1 MB that expands more than 100:1', async () => {
    const error = await failure(readZipSafely(writeZip([{ name: 'zeros.bin', data: Buffer.alloc(2 * MB) }])));
    expect(error.message).toBe('zip bomb: entry zeros.bin expands more than 100:1');
  });

  it('lets small entries expand as much as they like', async () => {
    const kept = await readZipSafely(writeZip([{ name: 'zeros.bin', data: Buffer.alloc(MB / 2) }]), {
      keep: () => true,
    });
    expect(kept.get('zeros.bin')).toHaveLength(MB / 2);
  });

  it('refuses an archive with more than 10,000 entries', async () => {
    const entries: ZipEntryInput[] = Array.from({ length: 10_001 }, (_, i) => ({ name: `e${i}`, data: '', deflate: false }));
    const error = await failure(readZipSafely(writeZip(entries)));
    expect(error.message).toBe('zip bomb: archive has 10001 entries, more than 10000');
  });

  it('counts actual bytes: an entry that inflates past its declared size is refused while inflating', async () => {
    const lying = writeZip([{ name: 'word/document.xml', data: Buffer.alloc(4 * MB, 'a'), declaredSize: 1000 }]);
    const error = await failure(readZipSafely(lying));
    expect(error.message).toBe('zip bomb: entry word/document.xml inflates beyond its declared size');
  });

  it('reports bytes that are not a zip as a corrupt archive', async () => {
    const error = await failure(readZipSafely(Buffer.from('PK\x03\x04 but nothing else')));
    expect(error.message).toMatch(/^corrupt archive: /);
  });

  it('reports a damaged entry as a corrupt archive naming it', async () => {
    const zip = writeZip([{ name: 'a.xml', data: randomBytes(5000).toString('hex') }]);
    // Overwrite deflated data just past the 35-byte local header.
    zip.fill(0xff, 60, 90);
    const error = await failure(readZipSafely(zip));
    expect(error.message).toMatch(/^corrupt archive: a\.xml: /);
  });
});
