import { newId } from '../../src/common/ids';
import { SqliteFileStore } from '../../src/storage/embedded/sqlite-file-store.adapter';
import { MongoFileStore } from '../../src/storage/mongo/mongo-file-store.adapter';
import { FileStatus, Passage, StoredFile } from '../../src/domain/file.model';
import { FileStore } from '../../src/domain/file-store.port';
import { parseFileFilter } from '../../src/domain/file-filter';
import { validMetadata } from '../../src/domain/file-metadata';
import { pick, storeBackends } from '../utils/store-backends';
import { expectFilterMatrix, MATRIX_FILES, PENDING_FILE } from '../utils/file-filter-matrix';

function file(collectionId: string, overrides: Partial<StoredFile> = {}): StoredFile {
  const now = new Date();
  return {
    id: newId('fle'),
    collectionId,
    name: 'report.pdf',
    mime: 'application/octet-stream',
    size: 0,
    status: 'pending',
    error: null,
    lane: 'standard',
    progress: { stage: 'queued', done: 0, total: 0 },
    sourceUrl: 'https://example.com/report.pdf',
    chunkCount: 0,
    characterCount: 0,
    metadata: {},
    pages: null,
    title: null,
    author: null,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

function passages(f: StoredFile, count: number, start = 0): Passage[] {
  return Array.from({ length: count }, (_, i) => ({
    id: newId('psg'),
    collectionId: f.collectionId,
    fileId: f.id,
    index: start + i,
    content: `Passage ${start + i} of ${f.name}`,
    page: i % 2 === 0 ? start + i + 1 : null,
  }));
}

/** The promises of the FileStore port, held by every adapter. */
describe.each(storeBackends)('FileStore contract: $name', (backend) => {
  let handles: Awaited<ReturnType<typeof backend.open>>;
  let store: FileStore;
  let collectionId: string;

  beforeAll(async () => {
    handles = await backend.open();
    store = pick<FileStore>(
      handles,
      (db) => new SqliteFileStore(db),
      (c) => new MongoFileStore(c),
    );
    await handles.mongo?.syncIndexes();
  });
  afterAll(() => handles.close());
  beforeEach(() => {
    collectionId = newId('col');
  });

  it('creates and reads a file with every field kept', async () => {
    const f = file(collectionId, { size: 42, mime: 'application/pdf', createdAt: new Date('2024-05-06T07:08:09.010Z') });
    await store.create(f);
    const read = await store.get(collectionId, f.id);
    expect(read).toEqual({ ...f, updatedAt: expect.any(Date) });
    expect(read!.createdAt.toISOString()).toBe('2024-05-06T07:08:09.010Z');
  });

  it('keeps metadata and document info, and answers the same filter the same way (SQLite JSON functions, a Mongo query)', async () => {
    const ids = new Map<string, string>();
    for (const { name, metadata, fields } of [...MATRIX_FILES.slice(0, 3), PENDING_FILE, MATRIX_FILES[3]]) {
      const status = name === PENDING_FILE.name ? 'pending' : 'indexed';
      const f = file(collectionId, { name, status, metadata: validMetadata(metadata), ...fields });
      await store.create(f);
      ids.set(name, f.id);
    }
    expect((await store.get(collectionId, ids.get('a')!))!).toMatchObject({
      metadata: { kind: 'contract', year: 2021, tags: ['lease'], signed: '2021-03-04T00:00:00.000Z' },
      pages: 3,
      title: 'Lease A',
      author: null,
    });
    const names = async (filter: unknown, indexedOnly = true) => {
      const parsed = parseFileFilter(filter);
      const found = indexedOnly
        ? await store.matchingIds(collectionId, parsed, 100)
        : (await store.list(collectionId, { offset: 0, limit: 100 }, [], parsed)).items.map((f) => f.id);
      return [...ids].filter(([, id]) => found.includes(id)).map(([name]) => name);
    };
    await expectFilterMatrix(names);
    expect(await names({ field: 'id', in: [ids.get('c'), ids.get('d')] })).toEqual(['c']);
    // Listing filters the same way, and also sees files that are not indexed.
    expect(await names({ field: 'metadata.kind', exists: false }, false)).toEqual(['d', 'e']);
    expect((await store.list(collectionId, { offset: 0, limit: 1 }, ['indexed'], parseFileFilter({ field: 'size', gte: 0 }))).total).toBe(
      4,
    );
    expect(await store.matchingIds(collectionId, parseFileFilter({ field: 'size', gte: 0 }), 2)).toHaveLength(2);
  });

  it('changes metadata by update without touching anything else', async () => {
    const f = file(collectionId, { metadata: { a: 1 } });
    await store.create(f);
    expect(await store.update(f.id, { metadata: { b: ['x'] }, pages: 7 })).toBe(true);
    expect(await store.get(collectionId, f.id)).toMatchObject({ metadata: { b: ['x'] }, pages: 7, name: f.name, status: f.status });
  });

  it('finds a file only within its own collection', async () => {
    const f = file(collectionId);
    await store.create(f);
    await expect(store.get(newId('col'), f.id)).resolves.toBeNull();
    await expect(store.get(collectionId, newId('fle'))).resolves.toBeNull();
  });

  it('lists oldest first with offset paging and the total', async () => {
    const base = Date.parse('2024-01-01T00:00:00Z');
    const files = [2, 0, 1].map((n) => file(collectionId, { name: `f${n}`, createdAt: new Date(base + n * 1000) }));
    for (const f of files) await store.create(f);
    await store.create(file(newId('col')));
    const first = await store.list(collectionId, { offset: 0, limit: 2 });
    expect(first.total).toBe(3);
    expect(first.items.map((f) => f.name)).toEqual(['f0', 'f1']);
    const second = await store.list(collectionId, { offset: 2, limit: 2 });
    expect(second.items.map((f) => f.name)).toEqual(['f2']);
  });

  it('lists only the files in the given statuses, with their total', async () => {
    const base = Date.parse('2024-01-01T00:00:00Z');
    const statuses = ['indexed', 'pending', 'error', 'indexed'] as const;
    for (const [n, status] of statuses.entries())
      await store.create(file(collectionId, { name: `s${n}`, status, createdAt: new Date(base + n * 1000) }));
    const indexed = await store.list(collectionId, { offset: 0, limit: 10 }, ['indexed']);
    expect(indexed).toMatchObject({ total: 2, items: [{ name: 's0' }, { name: 's3' }] });
    const unfinished = await store.list(collectionId, { offset: 1, limit: 1 }, ['pending', 'error']);
    expect(unfinished).toMatchObject({ total: 2, items: [{ name: 's2' }] });
    expect((await store.list(collectionId, { offset: 0, limit: 10 }, [])).total).toBe(4);
  });

  it('moves status only from an expected state, applying the update with it', async () => {
    const f = file(collectionId);
    await store.create(f);
    await expect(store.transition(f.id, ['pending'], 'processing', { mime: 'application/pdf', size: 10 })).resolves.toBe(true);
    // A second worker trying to claim the same file loses.
    await expect(store.transition(f.id, ['pending'], 'processing')).resolves.toBe(false);
    await expect(store.transition(f.id, ['processing'], 'indexed', { chunkCount: 3, characterCount: 120, error: null })).resolves.toBe(
      true,
    );
    const read = await store.get(collectionId, f.id);
    expect(read).toMatchObject({ status: 'indexed', mime: 'application/pdf', size: 10, chunkCount: 3, characterCount: 120 });
    expect(read!.updatedAt.getTime()).toBeGreaterThanOrEqual(f.updatedAt.getTime());
    await expect(store.transition(newId('fle'), ['pending'], 'processing')).resolves.toBe(false);
  });

  it('keeps the lane and the progress, and updates them with or without a status change', async () => {
    const f = file(collectionId, { lane: 'large', progress: null });
    await store.create(f);
    expect(await store.get(collectionId, f.id)).toMatchObject({ lane: 'large', progress: null });
    await expect(
      store.transition(f.id, ['pending'], 'processing', { progress: { stage: 'fetching', done: 0, total: 2048 } }),
    ).resolves.toBe(true);
    expect((await store.get(collectionId, f.id))!.progress).toEqual({ stage: 'fetching', done: 0, total: 2048 });
    await expect(store.update(f.id, { progress: { stage: 'embedding', done: 7, total: 10 }, lane: 'standard' })).resolves.toBe(true);
    expect(await store.get(collectionId, f.id)).toMatchObject({ lane: 'standard', progress: { stage: 'embedding', done: 7, total: 10 } });
    await store.update(f.id, { progress: null });
    expect((await store.get(collectionId, f.id))!.progress).toBeNull();
  });

  it('records an error message and clears it again', async () => {
    const f = file(collectionId);
    await store.create(f);
    await store.transition(f.id, ['pending'], 'error', { error: 'unsupported type: image/png' });
    expect((await store.get(collectionId, f.id))!.error).toBe('unsupported type: image/png');
    await store.transition(f.id, ['error'], 'pending', { error: null });
    expect((await store.get(collectionId, f.id))!).toMatchObject({ status: 'pending', error: null });
  });

  it('updates fields of an existing file only', async () => {
    const f = file(collectionId);
    await store.create(f);
    await expect(store.update(f.id, { size: 99 })).resolves.toBe(true);
    expect((await store.get(collectionId, f.id))!.size).toBe(99);
    await expect(store.update(newId('fle'), { size: 1 })).resolves.toBe(false);
  });

  it('gets many files by id, skipping unknown ones', async () => {
    const a = file(collectionId);
    const b = file(collectionId);
    await store.create(a);
    await store.create(b);
    const found = await store.getMany([a.id, newId('fle'), b.id]);
    expect(found.map((f) => f.id).sort()).toEqual([a.id, b.id].sort());
    await expect(store.getMany([])).resolves.toEqual([]);
  });

  it('pages through files by status across collections', async () => {
    const statuses: FileStatus[] = ['pending', 'processing', 'indexed', 'error', 'pending'];
    const created = statuses.map((status) => file(newId('col'), { status }));
    for (const f of created) await store.create(f);
    const wanted = new Set(created.filter((f) => f.status === 'pending' || f.status === 'processing').map((f) => f.id));
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.listByStatus(['pending', 'processing'], 2, after);
      if (page.length === 0) break;
      seen.push(...page.map((f) => f.id));
      after = page[page.length - 1].id;
    }
    expect(seen).toEqual([...seen].sort());
    for (const id of wanted) expect(seen).toContain(id);
    expect(seen.filter((id) => created.some((f) => f.id === id && !wanted.has(id)))).toEqual([]);
  });

  it('stores passages and reads them by id and in order', async () => {
    const f = file(collectionId);
    await store.create(f);
    const list = passages(f, 5);
    await store.insertPassages(list.slice(0, 3));
    await store.insertPassages(list.slice(3));
    const byId = await store.getPassages([list[4].id, list[0].id, newId('psg')]);
    expect(byId.sort((a, b) => a.index - b.index)).toEqual([list[0], list[4]]);
    const firstTwo = await store.listPassages(f.id, -1, 2);
    expect(firstTwo).toEqual(list.slice(0, 2));
    const rest = await store.listPassages(f.id, 1, 10);
    expect(rest).toEqual(list.slice(2));
  });

  it('keeps an empty passage and a passage without page', async () => {
    const f = file(collectionId);
    await store.create(f);
    const [p] = passages(f, 1);
    await store.insertPassages([{ ...p, content: '', page: null }]);
    expect(await store.getPassages([p.id])).toEqual([{ ...p, content: '', page: null }]);
  });

  it('deletes the passages of one file', async () => {
    const a = file(collectionId);
    const b = file(collectionId);
    await store.create(a);
    await store.create(b);
    await store.insertPassages([...passages(a, 2), ...passages(b, 2)]);
    await store.deletePassages(a.id);
    expect(await store.listPassages(a.id, -1, 10)).toEqual([]);
    expect(await store.listPassages(b.id, -1, 10)).toHaveLength(2);
  });

  it('deletes a file with its passages', async () => {
    const f = file(collectionId);
    await store.create(f);
    const list = passages(f, 3);
    await store.insertPassages(list);
    await expect(store.delete(f.id)).resolves.toBe(true);
    await expect(store.delete(f.id)).resolves.toBe(false);
    await expect(store.get(collectionId, f.id)).resolves.toBeNull();
    await expect(store.getPassages(list.map((p) => p.id))).resolves.toEqual([]);
  });

  it('deletes every file of a collection and nothing of another', async () => {
    const other = newId('col');
    const mine = [file(collectionId), file(collectionId)];
    const theirs = file(other);
    for (const f of [...mine, theirs]) await store.create(f);
    await store.insertPassages([...passages(mine[0], 2), ...passages(theirs, 2)]);
    await expect(store.deleteByCollection(collectionId)).resolves.toBe(2);
    expect((await store.list(collectionId, { offset: 0, limit: 10 })).total).toBe(0);
    expect(await store.listPassages(mine[0].id, -1, 10)).toEqual([]);
    expect((await store.list(other, { offset: 0, limit: 10 })).total).toBe(1);
    expect(await store.listPassages(theirs.id, -1, 10)).toHaveLength(2);
  });

  it('sums files by status, bytes, chunks and characters per collection', async () => {
    await store.create(file(collectionId, { status: 'indexed', size: 100, chunkCount: 3, characterCount: 2500 }));
    await store.create(file(collectionId, { status: 'indexed', size: 50, chunkCount: 1, characterCount: 400 }));
    await store.create(file(collectionId, { status: 'error', size: 7, error: 'corrupt PDF' }));
    await store.create(file(collectionId, { status: 'pending' }));
    await store.create(file(newId('col'), { status: 'indexed', size: 1000, chunkCount: 9, characterCount: 9000 }));
    await expect(store.stats(collectionId)).resolves.toEqual({
      files: { total: 4, pending: 1, processing: 0, indexed: 2, error: 1 },
      bytes: 157,
      chunks: 4,
      characters: 2900,
    });
    await expect(store.stats(newId('col'))).resolves.toEqual({
      files: { total: 0, pending: 0, processing: 0, indexed: 0, error: 0 },
      bytes: 0,
      chunks: 0,
      characters: 0,
    });
  });
});
