import { readFileSync } from 'node:fs';
import { fixturePath, REJECTED_FIXTURES } from '../../../test/fixtures/fixtures';
import { expectFailure } from '../../../test/fixtures/expect-failure';
import { makeLargeTextPdf } from '../../../test/fixtures/pdf-builder';
import { ErrorCode } from '../../common/app-error';
import { DetectedType } from '../detect-type';
import { ExtractorPool } from './extractor-pool';

const TXT: DetectedType = { kind: 'txt', mime: 'text/plain' };
const PDF: DetectedType = { kind: 'pdf', mime: 'application/pdf' };
const DOCX: DetectedType = { kind: 'docx', mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' };
const MISBEHAVING_WORKER = fixturePath('workers/crash-on-marker.worker.js');

/** A Buffer that owns its whole ArrayBuffer, as files read from disk do. */
const owned = (text: string) => {
  const bytes = Buffer.alloc(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
};

describe('ExtractorPool', () => {
  let pool: ExtractorPool;

  afterEach(async () => {
    await pool?.close();
  });

  it('extracts in a worker thread and hands back the document', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000 });
    await expect(pool.extract(owned('Hello from a worker.'), TXT)).resolves.toEqual({ segments: [{ text: 'Hello from a worker.' }] });
  });

  it('transfers a Buffer that owns its memory instead of copying it', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000 });
    const bytes = owned('moved, not copied');
    const done = pool.extract(bytes, TXT);
    expect(bytes.length).toBe(0);
    await expect(done).resolves.toEqual({ segments: [{ text: 'moved, not copied' }] });
  });

  it('copies a Buffer that shares the small-buffer pool, leaving its neighbours intact', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000 });
    const bytes = Buffer.from('pooled bytes');
    const neighbour = Buffer.from('a neighbour in the same pool');
    expect(bytes.buffer).toBe(neighbour.buffer);
    await expect(pool.extract(bytes, TXT)).resolves.toEqual({ segments: [{ text: 'pooled bytes' }] });
    expect(bytes.toString()).toBe('pooled bytes');
    expect(neighbour.toString()).toBe('a neighbour in the same pool');
  });

  it('tells the pages of a PDF read so far, up to all of them', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000 });
    const counts: [number, number][] = [];
    const doc = await pool.extract(makeLargeTextPdf(12), PDF, { onPages: (done, total) => counts.push([done, total]) });
    expect(doc.segments).toHaveLength(12);
    // The last count may arrive just after the result.
    const deadline = Date.now() + 30_000;
    while (!counts.some(([done]) => done === 12) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(counts[counts.length - 1]).toEqual([12, 12]);
    expect(counts.every(([done, total]) => total === 12 && done >= 1 && done <= 12)).toBe(true);
  });

  it('passes extraction errors through with their code and reason', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000 });
    const bomb = await expectFailure(
      pool.extract(readFileSync(fixturePath(REJECTED_FIXTURES.zipBombDocx)), DOCX),
      ErrorCode.EXTRACTION_FAILED,
    );
    expect(bomb.message).toMatch(/^zip bomb: /);
    const corrupt = await expectFailure(
      pool.extract(readFileSync(fixturePath(REJECTED_FIXTURES.corruptPdf)), PDF),
      ErrorCode.EXTRACTION_FAILED,
    );
    expect(corrupt.message).toMatch(/^corrupt PDF: /);
  });

  it('applies maxDecompressedBytes inside the worker', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000, maxDecompressedBytes: 1000 });
    const error = await expectFailure(pool.extract(readFileSync(fixturePath('sourdough.docx')), DOCX), ErrorCode.EXTRACTION_FAILED);
    expect(error.message).toBe('zip bomb: declared decompressed size exceeds 1000 bytes');
  });

  it('runs queued jobs on a limited number of threads, all of them, each with its own result', async () => {
    pool = new ExtractorPool({ threads: 2, timeoutMs: 30_000 });
    const texts = Array.from({ length: 7 }, (_, i) => `Document number ${i}.`);
    const documents = await Promise.all(texts.map((text) => pool.extract(owned(text), TXT)));
    expect(documents.map((d) => d.segments[0].text)).toEqual(texts);
  });

  it('times out a long job, terminates its worker, and keeps serving', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000 });
    const error = await expectFailure(pool.extract(makeLargeTextPdf(300), PDF, { timeoutMs: 1 }), ErrorCode.TIMEOUT);
    expect(error.message).toBe('extraction timed out after 1 ms');
    await expect(pool.extract(owned('Still here.'), TXT)).resolves.toEqual({ segments: [{ text: 'Still here.' }] });
  });

  it('kills a worker stuck in a loop when its time is up', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000, workerScript: MISBEHAVING_WORKER });
    const stuck = pool.extract(owned('SPIN forever'), TXT, { timeoutMs: 300 });
    const queued = pool.extract(owned('Queued behind the stuck job.'), TXT);
    const error = await expectFailure(stuck, ErrorCode.TIMEOUT);
    expect(error.message).toBe('extraction timed out after 300 ms');
    await expect(queued).resolves.toEqual({ segments: [{ text: 'Queued behind the stuck job.' }] });
  });

  it('fails the job of a worker that exits, and replaces the worker', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000, workerScript: MISBEHAVING_WORKER });
    const error = await expectFailure(pool.extract(owned('CRASH please'), TXT), ErrorCode.EXTRACTION_FAILED);
    expect(error.message).toBe('extraction worker exited with code 7');
    await expect(pool.extract(owned('After the crash.'), TXT)).resolves.toEqual({ segments: [{ text: 'After the crash.' }] });
  });

  it('fails the job of a worker that throws outside any handler, and replaces the worker', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000, workerScript: MISBEHAVING_WORKER });
    const error = await expectFailure(pool.extract(owned('THROW please'), TXT), ErrorCode.EXTRACTION_FAILED);
    expect(error.message).toBe('extraction worker crashed: worker blew up');
    await expect(pool.extract(owned('After the throw.'), TXT)).resolves.toEqual({ segments: [{ text: 'After the throw.' }] });
  });

  it('cancels a running job on abort, terminating its worker, and drops a queued one', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000, workerScript: MISBEHAVING_WORKER });
    const running = new AbortController();
    const waiting = new AbortController();
    const stuck = expectFailure(pool.extract(owned('SPIN until canceled'), TXT, { signal: running.signal }), ErrorCode.CANCELED);
    const queued = expectFailure(pool.extract(owned('never started'), TXT, { signal: waiting.signal }), ErrorCode.CANCELED);
    const next = pool.extract(owned('Runs after the cancel.'), TXT);
    waiting.abort();
    await queued;
    running.abort();
    await stuck;
    await expect(next).resolves.toEqual({ segments: [{ text: 'Runs after the cancel.' }] });
    await expectFailure(pool.extract(owned('x'), TXT, { signal: AbortSignal.abort() }), ErrorCode.CANCELED);
  });

  it('rejects queued and new jobs once closed', async () => {
    pool = new ExtractorPool({ threads: 1, timeoutMs: 30_000, workerScript: MISBEHAVING_WORKER });
    const running = expectFailure(pool.extract(owned('SPIN until closed'), TXT), ErrorCode.UNAVAILABLE);
    const queued = expectFailure(pool.extract(owned('never started'), TXT), ErrorCode.UNAVAILABLE);
    await pool.close();
    await running;
    await queued;
    await expectFailure(pool.extract(owned('too late'), TXT), ErrorCode.UNAVAILABLE);
  });

  it('refuses a pool without threads or time', () => {
    expect(() => new ExtractorPool({ threads: 0, timeoutMs: 1000 })).toThrow();
    expect(() => new ExtractorPool({ threads: 1, timeoutMs: 0 })).toThrow();
  });
});
