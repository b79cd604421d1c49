import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessPolicy } from '../auth/access-policy.service';
import { Principal } from '../auth/principal';
import { ErrorCode } from '../common/app-error';
import { newId } from '../common/ids';
import { Embedder } from '../domain/embedder.port';
import { SafeFetch } from '../common/safe-fetch';
import { loadConfig } from '../config/app-config';
import { createReranker } from '../embeddings/embeddings.module';
import { UnavailableCredentials } from '../engine/node-credentials.port';
import { Metrics } from '../metrics/metrics.service';
import { SqliteCollectionStore } from '../storage/embedded/sqlite-collection-store.adapter';
import { openSqliteDatabase, SqliteDb } from '../storage/embedded/sqlite-database';
import { SqliteFileStore } from '../storage/embedded/sqlite-file-store.adapter';
import { SqliteMembershipStore } from '../storage/embedded/sqlite-membership-store.adapter';
import { FileStatus } from '../domain/file.model';
import { SqliteVectorIndex } from '../search-index/embedded/sqlite-vector-index.adapter';
import { UnitFilter } from '../domain/vector-index.port';
import { SearchService } from './search.service';

/** Maps known texts to chosen vectors; anything else embeds as the direction (0, 0, 0, 1). */
class TableEmbedder extends Embedder {
  readonly model = 'table-4';
  readonly dimension = 4;
  calls = 0;
  readonly table = new Map<string, number[]>();

  async embed(texts: string[]): Promise<Float32Array[]> {
    this.calls++;
    return texts.map((text) => Float32Array.from(this.table.get(text) ?? [0, 0, 0, 1]));
  }

  async close(): Promise<void> {}
}

/** A unit vector at `angle` radians from (1, 0, 0, 0) in the first plane: cosine distance 1 - cos(angle). */
const at = (angle: number) => [Math.cos(angle), Math.sin(angle), 0, 0];

describe('SearchService', () => {
  let dir: string;
  let db: SqliteDb;
  let files: SqliteFileStore;
  let collections: SqliteCollectionStore;
  let index: SqliteVectorIndex;
  let embedder: TableEmbedder;
  let service: SearchService;
  let collectionId: string;
  const owner: Principal = { userId: 'usr_owner', keyId: null, isAdmin: false };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'search-'));
    db = openSqliteDatabase(dir);
    files = new SqliteFileStore(db);
    collections = new SqliteCollectionStore(db);
    index = new SqliteVectorIndex(db);
    await index.init();
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    embedder = new TableEmbedder();
    embedder.table.set('query', at(0));
    const config = loadConfig({ DATA_DIR: dir });
    service = new SearchService(
      new AccessPolicy(new SqliteMembershipStore(db)),
      collections,
      files,
      index,
      embedder,
      new Metrics(),
      createReranker(config, SafeFetch.fromConfig(config)),
      new UnavailableCredentials(),
      config,
    );
    collectionId = newId('col');
    const now = new Date();
    await collections.create({
      id: collectionId,
      name: 'c',
      ownerId: owner.userId,
      createdAt: now,
      updatedAt: now,
      embeddingModel: null,
      embeddingDimension: null,
    });
    await collections.claimEmbedding(collectionId, 'table-4', 4);
  });

  /** Stores a file with one passage per entry, each passage embedded as windows at the given angles. */
  async function addFile(
    name: string,
    passages: { content: string; windows: number[]; texts?: string[] }[],
    status: FileStatus = 'indexed',
  ) {
    const now = new Date();
    const fileId = newId('fle');
    await files.create({
      id: fileId,
      collectionId,
      name,
      mime: 'text/plain',
      size: 1,
      status,
      error: null,
      lane: 'standard',
      progress: null,
      sourceUrl: null,
      chunkCount: passages.length,
      characterCount: 1,
      metadata: {},
      pages: null,
      title: null,
      author: null,
      createdAt: now,
      updatedAt: now,
    });
    const ids = passages.map(() => newId('psg'));
    await files.insertPassages(passages.map((p, i) => ({ id: ids[i], collectionId, fileId, index: i, content: p.content, page: i + 1 })));
    await index.upsert(
      passages.flatMap((p, i) =>
        p.windows.map((angle, w) => ({
          id: `${ids[i]}_${w}`,
          collectionId,
          fileId,
          passageId: ids[i],
          text: p.texts?.[w] ?? p.content,
          vector: Float32Array.from(at(angle)),
        })),
      ),
    );
    return { fileId, ids };
  }

  const search = (input: Partial<Parameters<SearchService['search']>[2]> = {}, principal = owner) =>
    service.search(principal, collectionId, { text: 'query', topK: 10, offset: 0, ...input });

  it('returns each passage once with its best window distance, nearest first', async () => {
    const { fileId, ids } = await addFile('a.txt', [
      { content: 'far passage', windows: [1.2] },
      { content: 'near passage', windows: [0.9, 0.1, 0.5] },
      { content: 'middle passage', windows: [0.4] },
    ]);
    const { result } = await search();
    expect(result.map((r) => r.content)).toEqual(['near passage', 'middle passage', 'far passage']);
    expect(result[0]).toEqual({
      id: ids[1],
      content: 'near passage',
      distance: expect.closeTo(1 - Math.cos(0.1), 5),
      collectionId,
      fileId,
      fileName: 'a.txt',
      chunkIndex: 1,
      page: 2,
    });
    expect(embedder.calls).toBe(1);
  });

  it('pages over passages, not windows, even when many windows of one passage come first', async () => {
    await addFile('a.txt', [
      { content: 'crowded', windows: Array.from({ length: 30 }, (_, i) => 0.01 * i) },
      { content: 'second', windows: [0.5] },
      { content: 'third', windows: [0.6] },
    ]);
    expect((await search({ topK: 2 })).result.map((r) => r.content)).toEqual(['crowded', 'second']);
    expect((await search({ topK: 2, offset: 1 })).result.map((r) => r.content)).toEqual(['second', 'third']);
    expect((await search({ topK: 5, offset: 3 })).result).toEqual([]);
  });

  it('leaves out files that are not indexed yet', async () => {
    await addFile('busy.txt', [{ content: 'half written', windows: [0] }], 'processing');
    await addFile('done.txt', [{ content: 'finished', windows: [0.3] }]);
    expect((await search()).result.map((r) => r.fileName)).toEqual(['done.txt']);
  });

  it('answers an empty result without embedding when nothing was ever indexed', async () => {
    const now = new Date();
    collectionId = newId('col');
    await collections.create({
      id: collectionId,
      name: 'empty',
      ownerId: owner.userId,
      createdAt: now,
      updatedAt: now,
      embeddingModel: null,
      embeddingDimension: null,
    });
    await expect(search()).resolves.toEqual({ result: [] });
    expect(embedder.calls).toBe(0);
  });

  it('refuses a collection indexed with another model', async () => {
    const now = new Date();
    collectionId = newId('col');
    await collections.create({
      id: collectionId,
      name: 'other',
      ownerId: owner.userId,
      createdAt: now,
      updatedAt: now,
      embeddingModel: null,
      embeddingDimension: null,
    });
    await collections.claimEmbedding(collectionId, 'text-embedding-3-small', 1536);
    await expect(search()).rejects.toMatchObject({ code: ErrorCode.EMBEDDING_MISMATCH });
  });

  it('fuses keyword and vector ranks in hybrid mode, giving keyword-only passages their nearest stored window distance', async () => {
    embedder.table.set('kestrel', at(0));
    // Embedding the passage again would give another distance: the stored windows are what counts.
    embedder.table.set('the kestrel hovers over the field', at(1.0));
    await addFile('birds.txt', [
      { content: 'close in meaning', windows: [0.05] },
      { content: 'the kestrel hovers over the field', windows: [1.6, 1.4], texts: ['the kestrel hovers', 'over the field'] },
      ...Array.from({ length: 60 }, (_, i) => ({ content: `filler ${i}`, windows: [0.1 + i * 0.01] })),
    ]);
    const vectorOnly = (await search({ text: 'kestrel', topK: 5 })).result.map((r) => r.content);
    expect(vectorOnly).not.toContain('the kestrel hovers over the field');
    embedder.calls = 0;
    const hybrid = (await search({ text: 'kestrel', topK: 5, mode: 'hybrid' })).result;
    const kestrel = hybrid.find((r) => r.content === 'the kestrel hovers over the field')!;
    expect(hybrid.indexOf(kestrel)).toBeLessThanOrEqual(1);
    expect(kestrel.distance).toBeCloseTo(1 - Math.cos(1.4), 5);
    // The query alone was embedded.
    expect(embedder.calls).toBe(1);
    // The distance a vector search deep enough to reach it gives the same passage.
    const deep = (await search({ text: 'kestrel', topK: 100 })).result.find((r) => r.id === kestrel.id)!;
    expect(deep.distance).toBeCloseTo(kestrel.distance, 6);
  });

  it('diversifies with MMR from the stored vectors, embedding the query alone', async () => {
    await addFile('a.txt', [
      { content: 'first', windows: [0.1] },
      { content: 'twin of first', windows: [0.11] },
      { content: 'other side', windows: [-0.3] },
    ]);
    embedder.calls = 0;
    const plain = (await search({ topK: 2 })).result.map((r) => r.content);
    expect(plain).toEqual(['first', 'twin of first']);
    const diverse = (await search({ topK: 2, mmrLambda: 0.3 })).result;
    expect(diverse.map((r) => r.content)).toEqual(['first', 'other side']);
    expect(diverse[1].distance).toBeCloseTo(1 - Math.cos(0.3), 5);
    expect(embedder.calls).toBe(2);
  });

  it('hands the filter itself to an index that filters on file fields, resolving no file ids', async () => {
    const { fileId } = await addFile('kept.txt', [{ content: 'kept', windows: [0.1] }]);
    await addFile('other.txt', [{ content: 'other', windows: [0.05] }]);
    const given: UnitFilter[] = [];
    /** Filters as such an index would: here by the ids the filter names. */
    class FieldsIndex extends SqliteVectorIndex {
      override get filtersFileFields(): boolean {
        return true;
      }
      override searchVector(collection: string, vector: Float32Array, k: number, filter?: UnitFilter) {
        if (filter) given.push(filter);
        const files = filter && 'files' in filter ? filter.files : undefined;
        const ids = files?.op === 'test' && files.test.op === 'eq' ? [String(files.test.value)] : [];
        return index.searchVector(collection, vector, k, filter && { fileIds: ids });
      }
    }
    const config = loadConfig({ DATA_DIR: dir });
    const fieldsService = new SearchService(
      new AccessPolicy(new SqliteMembershipStore(db)),
      collections,
      files,
      new FieldsIndex(db),
      embedder,
      new Metrics(),
      createReranker(config, SafeFetch.fromConfig(config)),
      new UnavailableCredentials(),
      config,
    );
    const matching = jest.spyOn(files, 'matchingIds');
    const { result } = await fieldsService.search(owner, collectionId, {
      text: 'query',
      topK: 10,
      offset: 0,
      filter: { field: 'id', eq: fileId },
    });
    expect(result.map((hit) => hit.content)).toEqual(['kept']);
    expect(given).toEqual([{ files: { op: 'test', field: { file: 'id' }, test: { op: 'eq', value: fileId } } }]);
    expect(matching).not.toHaveBeenCalled();
    matching.mockRestore();
  });

  it('validates its input for both doors and hides collections from non-members', async () => {
    // SearchDto's rules and messages, as the REST API gives them, fields named as it names them.
    const refused = (fields: unknown[]) => ({ code: ErrorCode.VALIDATION_FAILED, details: { fields } });
    await expect(search({ topK: 0 })).rejects.toMatchObject(refused([{ field: 'top_k', reason: 'top_k must not be less than 1' }]));
    await expect(search({ topK: 101 })).rejects.toMatchObject(refused([{ field: 'top_k', reason: 'top_k must not be greater than 100' }]));
    await expect(search({ offset: -1 })).rejects.toMatchObject(refused([{ field: 'offset', reason: 'offset must not be less than 0' }]));
    await expect(search({ text: '   ' })).rejects.toMatchObject(
      refused([{ field: 'text', reason: 'text must be longer than or equal to 1 characters' }]),
    );
    await expect(search({ mode: 'fuzzy' as never })).rejects.toMatchObject(
      refused([{ field: 'mode', reason: expect.stringContaining('mode must be one of the following values') }]),
    );
    const stranger: Principal = { userId: 'usr_stranger', keyId: null, isAdmin: false };
    await expect(search({}, stranger)).rejects.toMatchObject({ code: ErrorCode.NOT_FOUND });
  });
});
