import { Client } from '@elastic/elasticsearch';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, ErrorCode } from '../../src/common/app-error';
import { newId } from '../../src/common/ids';
import { cosineDistance } from '../../src/embeddings/vectors';
import { ElasticsearchVectorIndex } from '../../src/search-index/elasticsearch/elasticsearch-vector-index.adapter';
import { SqliteVectorIndex } from '../../src/search-index/embedded/sqlite-vector-index.adapter';
import { parseFileFilter } from '../../src/domain/file-filter';
import { validMetadata } from '../../src/domain/file-metadata';
import { FileFields, IndexUnit, VectorIndex } from '../../src/domain/vector-index.port';
import { openSqliteDatabase } from '../../src/storage/embedded/sqlite-database';
import { expectFilterMatrix, MATRIX_FILES } from '../utils/file-filter-matrix';

/**
 * One behaviour for every VectorIndex adapter: SQLite always, Elasticsearch when ELASTICSEARCH_URL
 * is set (each run gets its own index, deleted afterwards).
 */
interface Backend {
  name: string;
  open(): Promise<{ index: VectorIndex; dispose(): Promise<void> }>;
}

const sqliteBackend: Backend = {
  name: 'SqliteVectorIndex',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'wcs-vector-index-'));
    const db = openSqliteDatabase(dir);
    const index = new SqliteVectorIndex(db);
    return {
      index,
      async dispose() {
        await index.close();
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const elasticsearchBackend: Backend = {
  name: 'ElasticsearchVectorIndex',
  async open() {
    const client = new Client({ node: process.env.ELASTICSEARCH_URL! });
    const name = `contract-vector-index-${newId('req').toLowerCase()}`;
    const index = new ElasticsearchVectorIndex(client, { index: name });
    return {
      index,
      async dispose() {
        await client.indices.delete({ index: name, ignore_unavailable: true });
        await index.close();
      },
    };
  },
};

const backends: [string, Backend | null][] = [
  [sqliteBackend.name, sqliteBackend],
  [elasticsearchBackend.name, process.env.ELASTICSEARCH_URL ? elasticsearchBackend : null],
];

const vec = (...values: number[]) => Float32Array.from(values);

/** A file's filterable fields: a text file of no pages, title or author unless overridden. */
const fields = (metadata: Record<string, unknown>, overrides: Partial<FileFields>): FileFields => ({
  name: 'file.txt',
  type: 'text/plain',
  size: 10,
  pages: null,
  title: null,
  author: null,
  createdAt: new Date(Date.UTC(2024, 0, 1)),
  metadata: validMetadata(metadata),
  ...overrides,
});

/** Deterministic vectors spread around the sphere, so the expected ranking has no near-ties. */
function spreadVectors(count: number, dimension: number): Float32Array[] {
  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  return Array.from({ length: count }, () => Float32Array.from({ length: dimension }, next));
}

async function expectAppError(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
}

const HOSTILE_QUERIES = [
  '"',
  '""',
  "'",
  '"unbalanced quote',
  'AND',
  'OR NOT AND',
  'NEAR(zebra quantum, 2)',
  'zebra*',
  '*',
  '^zebra',
  'text:zebra',
  '{text}: zebra',
  '(zebra',
  ')',
  '-zebra +quantum',
  'zebra" OR "1"="1',
  "'; DROP TABLE search_units; --",
  '\u0000',
  '\u0301',
  'e\u0301',
  '🦓🦓',
  '\\',
  '/* */',
  '   ',
  '',
  'zebra '.repeat(500),
];

describe.each(backends)('VectorIndex contract: %s', (_name, backend) => {
  const suite = backend ? describe : describe.skip;

  suite('behaviour', () => {
    let index: VectorIndex;
    let dispose: () => Promise<void>;
    let collection: string;

    const unit = (fields: Partial<IndexUnit> & { vector: Float32Array }): IndexUnit => ({
      id: `unt_${randomUUID()}`,
      collectionId: collection,
      fileId: 'fle_default',
      passageId: 'psg_default',
      text: 'plain words',
      ...fields,
    });

    beforeAll(async () => {
      ({ index, dispose } = await backend!.open());
      await index.init();
    });

    afterAll(async () => {
      await dispose?.();
    });

    beforeEach(() => {
      collection = newId('col');
    });

    it('init is idempotent and the index answers ping', async () => {
      await index.init();
      await expect(index.ping()).resolves.toBeUndefined();
    });

    it('an empty collection counts zero and finds nothing', async () => {
      expect(await index.countUnits(collection)).toBe(0);
      expect(await index.searchVector(collection, vec(1, 0, 0, 0), 5)).toEqual([]);
      expect(await index.searchText(collection, 'anything at all', 5)).toEqual([]);
      await index.deleteByFile(collection, 'fle_none');
      await index.deleteByCollection(collection);
    });

    it('returns the exact nearest neighbours by cosine distance, ascending', async () => {
      const vectors = spreadVectors(40, 8);
      const units = vectors.map((vector, i) => unit({ vector, passageId: `psg_${i}`, fileId: `fle_${i % 3}` }));
      await index.upsert(units);
      const query = spreadVectors(41, 8)[40];

      const expected = units
        .map((u) => ({ unitId: u.id, distance: cosineDistance(u.vector, query) }))
        .sort((a, b) => a.distance - b.distance)
        .slice(0, 10);
      const hits = await index.searchVector(collection, query, 10);

      expect(hits.map((h) => h.unitId)).toEqual(expected.map((e) => e.unitId));
      hits.forEach((hit, i) => {
        expect(hit.distance).toBeCloseTo(expected[i].distance, 3);
        const source = units.find((u) => u.id === hit.unitId)!;
        expect(hit.passageId).toBe(source.passageId);
        expect(hit.fileId).toBe(source.fileId);
      });
      for (let i = 1; i < hits.length; i++) expect(hits[i].distance).toBeGreaterThanOrEqual(hits[i - 1].distance);
    });

    it("reads back the stored vectors of passages' units, by passage, within the collection", async () => {
      const [a0, a1, b0] = spreadVectors(3, 8);
      await index.upsert([
        unit({ vector: a0, passageId: 'psg_a', fileId: 'fle_1' }),
        unit({ vector: a1, passageId: 'psg_a', fileId: 'fle_1' }),
        unit({ vector: b0, passageId: 'psg_b', fileId: 'fle_2' }),
        unit({ vector: b0, passageId: 'psg_a', fileId: 'fle_1', collectionId: newId('col') }),
      ]);
      const vectors = await index.passageVectors(collection, ['psg_a', 'psg_b', 'psg_none']);
      expect([...vectors.keys()].sort()).toEqual(['psg_a', 'psg_b']);
      // The same directions as upserted (an adapter may store them scaled to unit length).
      const distancesTo = (passageId: string, original: Float32Array) =>
        vectors.get(passageId)!.map((stored) => cosineDistance(stored, original));
      expect(vectors.get('psg_a')).toHaveLength(2);
      expect(Math.min(...distancesTo('psg_a', a0))).toBeCloseTo(0, 5);
      expect(Math.min(...distancesTo('psg_a', a1))).toBeCloseTo(0, 5);
      expect(distancesTo('psg_b', b0)[0]).toBeCloseTo(0, 5);

      await index.deleteByFile(collection, 'fle_1');
      expect([...(await index.passageVectors(collection, ['psg_a', 'psg_b'])).keys()]).toEqual(['psg_b']);
      expect((await index.passageVectors(collection, [])).size).toBe(0);
    });

    it('measures cosine, not length: a scaled copy of the query is at distance 0, its opposite at 2', async () => {
      const same = unit({ vector: vec(3, 0, 0, 0) });
      const opposite = unit({ vector: vec(-0.5, 0, 0, 0) });
      const orthogonal = unit({ vector: vec(0, 2, 0, 0) });
      await index.upsert([opposite, orthogonal, same]);

      const hits = await index.searchVector(collection, vec(1, 0, 0, 0), 3);

      expect(hits.map((h) => h.unitId)).toEqual([same.id, orthogonal.id, opposite.id]);
      expect(hits[0].distance).toBeCloseTo(0, 3);
      expect(hits[1].distance).toBeCloseTo(1, 3);
      expect(hits[2].distance).toBeCloseTo(2, 3);
    });

    it('restricts vector and keyword search to the files of a filter: every hit in it, the nearest of them first', async () => {
      const vectors = spreadVectors(30, 8);
      const units = vectors.map((vector, i) => unit({ vector, fileId: `fle_${i % 5}`, text: `lantern ${i}` }));
      await index.upsert(units);
      const query = spreadVectors(31, 8)[30];
      const allowed = new Set(['fle_1', 'fle_3']);
      const expected = units
        .filter((u) => allowed.has(u.fileId))
        .map((u) => ({ unitId: u.id, distance: cosineDistance(u.vector, query) }))
        .sort((a, b) => a.distance - b.distance)
        .slice(0, 5);

      const hits = await index.searchVector(collection, query, 5, { fileIds: ['fle_1', 'fle_3', 'fle_unknown'] });
      expect(hits.map((h) => h.unitId)).toEqual(expected.map((e) => e.unitId));
      const words = await index.searchText(collection, 'lantern', 30, { fileIds: ['fle_3'] });
      expect(words.map((h) => h.fileId)).toEqual(Array(6).fill('fle_3'));
      expect(await index.searchVector(collection, query, 5, { fileIds: [] })).toEqual([]);
      expect(await index.searchVector(collection, query, 5, { fileIds: ['fle_unknown'] })).toEqual([]);
    });

    it('filters on the file fields it keeps with the units, as the file stores answer the same filters, and follows their changes', async () => {
      // An index that takes filters as file ids only is given ids (resolved by the file store): nothing to keep.
      if (!index.filtersFileFields) {
        await index.setFileFields(collection, 'fle_x', fields({}, {}));
        return;
      }
      const query = vec(1, 0, 0, 0);
      for (const [
        i,
        {
          name,
          metadata,
          fields: { mime, ...rest },
        },
      ] of MATRIX_FILES.entries()) {
        await index.upsert([
          unit({ fileId: `fle_${name}`, passageId: `psg_${name}`, vector: vec(1, i + 1, 0, 0), text: `harbour ${name}` }),
        ]);
        await index.setFileFields(collection, `fle_${name}`, fields(metadata, { ...rest, ...(mime ? { type: mime } : {}) }));
      }
      /** The files (by name) whose units the filter keeps, by vector and by keyword search, which must agree. */
      const names = async (filter: unknown) => {
        const files = parseFileFilter(filter);
        const near = (await index.searchVector(collection, query, 50, { files })).map((h) => h.fileId.slice(4));
        const words = (await index.searchText(collection, 'harbour', 50, { files })).map((h) => h.fileId.slice(4));
        expect(words.sort()).toEqual([...near].sort());
        return near.sort();
      };
      await expectFilterMatrix(names);
      expect(await names({ field: 'id', in: ['fle_c', 'fle_d'] })).toEqual(['c']);

      // A metadata change replaces what the units keep: the next search sees it.
      await index.setFileFields(
        collection,
        'fle_e',
        fields({ kind: 'contract', year: 2024 }, { createdAt: MATRIX_FILES[3].fields.createdAt }),
      );
      expect(await names({ field: 'metadata.kind', eq: 'contract' })).toEqual(['a', 'b', 'e']);
      expect(await names({ field: 'metadata.year', eq: '2021' })).toEqual([]);
      // Units written after (a file indexed again) keep nothing until their file's fields are set again.
      await index.upsert([unit({ fileId: 'fle_e', passageId: 'psg_e2', vector: vec(1, 9, 0, 0), text: 'harbour again' })]);
      expect(await names({ field: 'metadata.year', eq: 2024 })).toEqual(['e']);
    });

    it('returns at most k hits, and every unit when k exceeds the count', async () => {
      await index.upsert(spreadVectors(6, 4).map((vector) => unit({ vector })));
      expect(await index.searchVector(collection, vec(1, 1, 0, 0), 4)).toHaveLength(4);
      expect(await index.searchVector(collection, vec(1, 1, 0, 0), 50)).toHaveLength(6);
    });

    it('keeps collections apart in searches, counts and deletes', async () => {
      const other = newId('col');
      const mine = unit({ vector: vec(1, 0, 0, 0), text: 'zebra crossing', fileId: 'fle_shared' });
      const theirs = unit({ collectionId: other, vector: vec(1, 0, 0, 0), text: 'zebra crossing', fileId: 'fle_shared' });
      await index.upsert([mine, theirs]);

      expect((await index.searchVector(collection, vec(1, 0, 0, 0), 10)).map((h) => h.unitId)).toEqual([mine.id]);
      expect((await index.searchText(collection, 'zebra', 10)).map((h) => h.unitId)).toEqual([mine.id]);
      expect(await index.countUnits(other)).toBe(1);

      await index.deleteByFile(collection, 'fle_shared');
      expect(await index.countUnits(collection)).toBe(0);
      expect(await index.countUnits(other)).toBe(1);
      await index.deleteByCollection(other);
    });

    it('replaces a unit upserted again under the same id', async () => {
      const first = unit({ vector: vec(1, 0, 0, 0), text: 'walrus', passageId: 'psg_old', fileId: 'fle_old' });
      await index.upsert([first]);
      await index.upsert([{ ...first, vector: vec(0, 1, 0, 0), text: 'narwhal', passageId: 'psg_new', fileId: 'fle_new' }]);

      expect(await index.countUnits(collection)).toBe(1);
      const [hit] = await index.searchVector(collection, vec(0, 1, 0, 0), 5);
      expect(hit).toEqual({ unitId: first.id, passageId: 'psg_new', fileId: 'fle_new', distance: expect.closeTo(0, 3) });
      expect(await index.searchText(collection, 'walrus', 5)).toEqual([]);
      expect((await index.searchText(collection, 'narwhal', 5)).map((h) => h.unitId)).toEqual([first.id]);
    });

    it('deletes by file, leaving the other files of the collection', async () => {
      const a1 = unit({ vector: vec(1, 0, 0, 0), fileId: 'fle_a', text: 'lighthouse keeper' });
      const a2 = unit({ vector: vec(0.9, 0.1, 0, 0), fileId: 'fle_a', text: 'lighthouse lamp' });
      const b1 = unit({ vector: vec(0.8, 0.2, 0, 0), fileId: 'fle_b', text: 'lighthouse island' });
      await index.upsert([a1, a2, b1]);

      await index.deleteByFile(collection, 'fle_a');

      expect(await index.countUnits(collection)).toBe(1);
      expect((await index.searchVector(collection, vec(1, 0, 0, 0), 10)).map((h) => h.unitId)).toEqual([b1.id]);
      expect((await index.searchText(collection, 'lighthouse', 10)).map((h) => h.unitId)).toEqual([b1.id]);
    });

    it('deletes a whole collection', async () => {
      await index.upsert(spreadVectors(12, 4).map((vector, i) => unit({ vector, fileId: `fle_${i % 4}`, text: `tide table ${i}` })));
      expect(await index.countUnits(collection)).toBe(12);

      await index.deleteByCollection(collection);

      expect(await index.countUnits(collection)).toBe(0);
      expect(await index.searchVector(collection, vec(1, 0, 0, 0), 10)).toEqual([]);
      expect(await index.searchText(collection, 'tide', 10)).toEqual([]);
    });

    it('ranks BM25 hits by relevance: more query words first, non-matching units absent', async () => {
      const both = unit({ vector: vec(1, 0, 0, 0), passageId: 'psg_both', text: 'The zebra studies quantum physics at night.' });
      const one = unit({ vector: vec(0, 1, 0, 0), passageId: 'psg_one', text: 'A zebra grazes on the savanna near the river.' });
      const none = unit({ vector: vec(0, 0, 1, 0), passageId: 'psg_none', text: 'Bread rises in a warm kitchen overnight.' });
      await index.upsert([none, one, both]);

      const hits = await index.searchText(collection, 'zebra quantum', 10);

      expect(hits.map((h) => h.passageId)).toEqual(['psg_both', 'psg_one']);
      expect(hits[0].score).toBeGreaterThan(hits[1].score);
      expect(hits[1].score).toBeGreaterThan(0);
      expect(hits[0]).toMatchObject({ unitId: both.id, fileId: both.fileId });
      expect(await index.searchText(collection, 'zebra quantum', 1)).toHaveLength(1);
    });

    it('takes search text as words, never as query syntax', async () => {
      const zebra = unit({ vector: vec(1, 0, 0, 0), text: 'zebra and quantum' });
      await index.upsert([zebra, unit({ vector: vec(0, 1, 0, 0), text: 'unrelated words' })]);

      for (const query of HOSTILE_QUERIES) {
        const hits = await index.searchText(collection, query, 5);
        expect(Array.isArray(hits)).toBe(true);
        if (/zebra/.test(query)) expect(hits.map((h) => h.unitId)).toContain(zebra.id);
      }
      expect(await index.countUnits(collection)).toBe(2);
    });

    it('refuses another dimension in a collection that has vectors, writing nothing of the batch', async () => {
      await index.upsert([unit({ vector: vec(1, 0, 0, 0) })]);

      await expectAppError(index.upsert([unit({ vector: vec(1, 0, 0, 0, 0, 0, 0, 0) })]), ErrorCode.EMBEDDING_MISMATCH);
      await expectAppError(index.searchVector(collection, vec(1, 0, 0), 5), ErrorCode.EMBEDDING_MISMATCH);
      const other = newId('col');
      const mixed = [unit({ collectionId: other, vector: vec(1, 0) }), unit({ vector: vec(1, 0, 0, 0, 0, 0, 0, 0) })];
      await expectAppError(index.upsert(mixed), ErrorCode.EMBEDDING_MISMATCH);

      expect(await index.countUnits(collection)).toBe(1);
      expect(await index.countUnits(other)).toBe(0);
    });

    it('refuses a batch that mixes dimensions within one collection', async () => {
      await expectAppError(index.upsert([unit({ vector: vec(1, 0) }), unit({ vector: vec(1, 0, 0) })]), ErrorCode.EMBEDDING_MISMATCH);
      expect(await index.countUnits(collection)).toBe(0);
    });

    it('lets each collection have its own dimension, and an emptied collection take a new one', async () => {
      const other = newId('col');
      await index.upsert([unit({ vector: vec(1, 0, 0, 0) }), unit({ collectionId: other, vector: vec(0, 1, 0, 0, 0, 0) })]);
      expect(await index.searchVector(other, vec(0, 1, 0, 0, 0, 0), 5)).toHaveLength(1);

      await index.deleteByCollection(collection);
      const replacement = unit({ vector: vec(0, 0, 1) });
      await index.upsert([replacement]);

      expect((await index.searchVector(collection, vec(0, 0, 1), 5)).map((h) => h.unitId)).toEqual([replacement.id]);
      await index.deleteByCollection(other);
    });

    it('lets a batch re-embed every unit of a collection with another dimension', async () => {
      const first = unit({ vector: vec(1, 0, 0, 0) });
      const second = unit({ vector: vec(0, 1, 0, 0) });
      await index.upsert([first, second]);

      await index.upsert([
        { ...first, vector: vec(1, 0) },
        { ...second, vector: vec(0, 1) },
      ]);

      expect((await index.searchVector(collection, vec(0, 1), 5)).map((h) => h.unitId)).toEqual([second.id, first.id]);
      await expectAppError(index.searchVector(collection, vec(0, 1, 0, 0), 5), ErrorCode.EMBEDDING_MISMATCH);
    });

    it('refuses vectors without a cosine distance and out-of-range k', async () => {
      await expectAppError(index.upsert([unit({ vector: vec(0, 0, 0, 0) })]), ErrorCode.EMBEDDING_FAILED);
      await expectAppError(index.upsert([unit({ vector: vec(1, Number.NaN, 0, 0) })]), ErrorCode.EMBEDDING_FAILED);
      await expectAppError(index.upsert([unit({ vector: new Float32Array(0) })]), ErrorCode.EMBEDDING_FAILED);
      await expectAppError(index.searchVector(collection, vec(0, 0, 0, 0), 5), ErrorCode.EMBEDDING_FAILED);
      await expectAppError(index.searchVector(collection, vec(1, 0, 0, 0), 0), ErrorCode.VALIDATION_FAILED);
      await expectAppError(index.searchText(collection, 'zebra', 1.5), ErrorCode.VALIDATION_FAILED);
      expect(await index.countUnits(collection)).toBe(0);
    });

    it('accepts an empty batch', async () => {
      await index.upsert([]);
      expect(await index.countUnits(collection)).toBe(0);
    });
  });
});
