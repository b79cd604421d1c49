import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as sqliteVec from 'sqlite-vec';
import { ErrorCode } from '../../common/app-error';
import { IndexUnit } from '../../domain/vector-index.port';
import { CHECKPOINT_BACKSTOP_PAGES } from '../../storage/embedded/checkpoint-thread';
import { EXACT_SCAN_BELOW } from './nearest/collection-vectors';
import { SEARCH_THREADS } from './nearest/nearest-threads';
import { groupCommitOf } from '../../storage/embedded/group-commit';
import { DELETE_BATCH, SqliteVectorIndex, VectorNotices } from './sqlite-vector-index.adapter';

/** What the contract suite cannot see: the tables behind the port. */
describe('SqliteVectorIndex storage', () => {
  let dir: string;
  let db: Database.Database;
  let index: SqliteVectorIndex;

  const open = () => {
    const connection = new Database(join(dir, 'index.db'));
    connection.pragma('journal_mode = WAL');
    sqliteVec.load(connection);
    return connection;
  };
  const rows = (sql: string) => db.prepare(sql).pluck().get() as number;
  /** Floats stored in the vector tables: those of live units, and nothing left behind by deletes. */
  const storedFloats = () =>
    rows(
      `SELECT (SELECT coalesce(sum(length(vector)), 0) FROM search_unit_vectors) + (SELECT coalesce(sum(length(vectors)), 0) FROM search_vector_pairs)`,
    ) / 4;
  const unit = (i: number, fields: Partial<IndexUnit> = {}): IndexUnit => ({
    id: `unt_${i}`,
    collectionId: 'col_a',
    fileId: `fle_${i % 3}`,
    passageId: `psg_${i}`,
    text: `lantern number ${i}`,
    vector: Float32Array.from([1, i % 7, i % 5, 1]),
    ...fields,
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-sqlite-index-'));
    db = open();
    index = new SqliteVectorIndex(db);
    await index.init();
  });

  afterEach(async () => {
    await index.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes in what a worker process commits, told by its notices, before any search asks', async () => {
    // The processes' channel, linked: what the worker announces reaches the searching process's listeners.
    const listeners = new Set<(collectionId: string) => void>();
    const announced: string[] = [];
    const answering: VectorNotices = {
      announceVectors: (collectionId) => announced.push(collectionId),
      onVectors: (listener) => (listeners.add(listener), () => listeners.delete(listener)),
    };
    const ingesting: VectorNotices = {
      announceVectors: (collectionId) => listeners.forEach((listener) => listener(collectionId)),
      onVectors: () => () => undefined,
    };
    await index.close();
    index = new SqliteVectorIndex(db, { notices: answering });
    await index.init();
    const otherDb = open();
    const worker = new SqliteVectorIndex(otherDb, { answersSearches: false, notices: ingesting });
    await worker.init();
    const held = async (size: number) => {
      for (let tries = 0; ; tries++) {
        const stats = (await index.searchThreadStats()).collections.find((c) => c.collectionId === 'col_a');
        if (stats?.size === size) return;
        if (tries > 1_500) throw new Error(`the search threads hold ${JSON.stringify(stats)}, not ${size} rows`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      await worker.upsert(Array.from({ length: 40 }, (_, i) => unit(i)));
      await held(40);
      // Loaded: later commits are read above what the threads hold.
      await worker.upsert(Array.from({ length: 5 }, (_, i) => unit(100 + i)));
      await held(45);
      // The worker's own threads stay empty; the searching process announces nothing.
      expect((await worker.searchThreadStats()).collections).toEqual([]);
      expect(announced).toEqual([]);
    } finally {
      await worker.close();
      otherDb.close();
    }
  });

  it("leaves a worker's commits to its ingestion going quiet or many rows waiting, and a search meanwhile still finds every committed row", async () => {
    const listeners = new Set<(collectionId: string) => void>();
    let notices = 0;
    const answering: VectorNotices = {
      announceVectors: () => undefined,
      onVectors: (listener) => (listeners.add(listener), () => listeners.delete(listener)),
    };
    const ingesting: VectorNotices = {
      announceVectors: (collectionId) => {
        listeners.forEach((listener) => listener(collectionId));
        notices++;
      },
      onVectors: () => () => undefined,
    };
    const noticed = async (count: number) => {
      for (let tries = 0; notices < count; tries++) {
        if (tries > 1_500) throw new Error(`${notices} notices, not ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await index.close();
    // Ingestion never goes quiet here: a search takes the rows in, or 30 rows waiting.
    index = new SqliteVectorIndex(db, { notices: answering, takeIn: { quietMs: 600_000, atMostRows: 30 } });
    await index.init();
    const otherDb = open();
    const worker = new SqliteVectorIndex(otherDb, { answersSearches: false, notices: ingesting });
    await worker.init();
    // Each unit at its own angle, well apart from its neighbours even in int8 codes.
    const at = (i: number) => Float32Array.from([Math.cos(i / 30), Math.sin(i / 30), 0, 0]);
    const nearest = async (i: number) =>
      (await index.searchVector('col_a', at(i), 3)).slice(0, 1).map((h) => [h.unitId, Number(h.distance.toFixed(6))]);
    try {
      await worker.upsert(Array.from({ length: 40 }, (_, i) => unit(i, { vector: at(i) })));
      await noticed(1);
      // Told, but not yet taken in: the search threads hold nothing of the collection.
      expect((await index.searchThreadStats()).collections).toEqual([]);
      expect(await nearest(17)).toEqual([['unt_17', 0]]);
      // Loaded by that search; the next commit is taken in by the next search, not by its notice.
      await worker.upsert([unit(40, { vector: at(40) })]);
      await noticed(2);
      expect(await nearest(40)).toEqual([['unt_40', 0]]);
      expect((await index.searchThreadStats()).collections).toEqual([expect.objectContaining({ collectionId: 'col_a', size: 41 })]);
      // 40 rows waiting, more than 30: taken in on their notice, no search asking.
      await worker.upsert(Array.from({ length: 40 }, (_, i) => unit(41 + i, { vector: at(41 + i) })));
      for (let tries = 0; ; tries++) {
        const [held] = (await index.searchThreadStats()).collections;
        if (held?.size === 81) break;
        if (tries > 1_500) throw new Error(`the search threads hold ${JSON.stringify(held)}, not 81 rows`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await worker.close();
      otherDb.close();
    }
  });

  it('searches what another process on the store wrote after this one loaded the collection, with its own vectors', async () => {
    const otherDb = open();
    const other = new SqliteVectorIndex(otherDb);
    await other.init();
    try {
      const near = async (vector: number[]) =>
        (await index.searchVector('col_a', Float32Array.from(vector), 3)).map((h) => [h.unitId, Number(h.distance.toFixed(6))]);
      // Thirty units nearer to every query below than a stale code would be: a row the thread holds
      // under the wrong vector falls out of the candidates instead of being saved by the re-rank.
      const fillers = Array.from({ length: 30 }, (_, i) =>
        unit(100 + i, { fileId: 'fle_fill', vector: Float32Array.from([0.5, 0.5, 0.5, 0.5 + i / 100]) }),
      );
      await other.upsert([
        unit(1, { vector: Float32Array.from([1, 0, 0, 0]) }),
        unit(2, { vector: Float32Array.from([0, 1, 0, 0]) }),
        ...fillers,
      ]);
      // This process loads the collection.
      expect((await near([1, 0, 0, 0]))[0]).toEqual(['unt_1', 0]);
      // The other process adds a unit, then deletes its newest (top seq) and adds another: SQLite would
      // hand that seq again; this process must search the new unit by its own vector, not the old code.
      await other.upsert([unit(3, { fileId: 'fle_x', vector: Float32Array.from([0, 0, 1, 0]) })]);
      expect((await near([0, 0, 1, 0]))[0]).toEqual(['unt_3', 0]);
      await other.deleteByFile('col_a', 'fle_x');
      await other.upsert([unit(4, { fileId: 'fle_y', vector: Float32Array.from([0, 0, 0, 1]) })]);
      expect((await near([0, 0, 0, 1]))[0]).toEqual(['unt_4', 0]);
      expect((await near([0, 0, 1, 0])).map(([id]) => id)).not.toContain('unt_3');
      // A deleted unit is let go of, so k hits are still k live ones.
      await other.deleteByFile('col_a', 'fle_1');
      expect((await near([1, 0, 0, 0])).map(([id]) => id)).not.toContain('unt_1');
    } finally {
      await other.close();
      otherDb.close();
    }
  });

  it("leaves the WAL's checkpoints to a thread once it writes, its own threshold the backstop", async () => {
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1_000);
    await index.upsert([unit(1)]);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(CHECKPOINT_BACKSTOP_PAGES);
  });

  it('deletes a collection larger than one batch without leaving vector or FTS rows behind', async () => {
    const count = DELETE_BATCH * 2 + 37;
    await index.upsert(Array.from({ length: count }, (_, i) => unit(i)));
    await index.upsert([unit(count, { collectionId: 'col_b' })]);
    expect(storedFloats()).toBe((count + 1) * 4);

    await index.deleteByCollection('col_a');
    // Gone for every read at once; the rows themselves are purged in the background.
    expect(await index.countUnits('col_a')).toBe(0);
    expect(await index.searchText('col_a', 'lantern', 10)).toEqual([]);
    await index.upsert([unit(count + 1)]);
    await index.whenPurged();

    expect(rows('SELECT count(*) FROM search_units')).toBe(2);
    expect(await index.countUnits('col_a')).toBe(1);
    expect(rows('SELECT count(*) FROM search_deleted_collections')).toBe(0);
    expect(storedFloats()).toBe(2 * 4);
    expect(rows(`SELECT count(*) FROM search_units_fts WHERE search_units_fts MATCH '"lantern"'`)).toBe(2);
  });

  it('stores 512-float vectors two to a page, where one took a page alone', async () => {
    const vector = (i: number) => Float32Array.from({ length: 512 }, (_, d) => (d === i % 512 ? 1 : 0));
    await index.upsert(Array.from({ length: 256 }, (_, i) => unit(i, { vector: vector(i) })));
    const pages = rows(`SELECT count(*) FROM dbstat WHERE name IN ('search_unit_vectors', 'search_vector_pairs')`);
    expect(pages).toBeLessThanOrEqual(256 * 0.6);
  });

  it('finds each vector wherever it sits in its pair: across batches, of another dimension, beside a deleted partner', async () => {
    const v = (...floats: number[]) => Float32Array.from(floats);
    // Unit length, so they are stored as they are.
    const written = new Map<string, Float32Array>();
    const put = async (units: IndexUnit[]) => {
      await index.upsert(units);
      for (const u of units) written.set(u.passageId, u.vector);
    };
    const read = async (collectionId: string, passageIds: string[]) =>
      [...(await index.passageVectors(collectionId, passageIds)).entries()].map(([id, [vector]]) => [id, [...vector]]);
    const expected = (passageIds: string[]) => passageIds.map((id) => [id, [...written.get(id)!]]);
    // Seqs 1-2 (seq 1 alone in its row, seq 2 starts the next), 3 in col_b with 3 floats (completes
    // seq 2's row), 4-6, then 7 (completes seq 6's row).
    await put([unit(1, { vector: v(1, 0, 0, 0) }), unit(2, { vector: v(0, 1, 0, 0), fileId: 'fle_alone' })]);
    await put([unit(3, { collectionId: 'col_b', vector: v(0, 0.6, 0.8) })]);
    await put([v(0, 0, 0.6, 0.8), v(0, 0, 0.8, 0.6), v(0, 0, 0, 1)].map((vector, i) => unit(i + 4, { vector })));
    await put([unit(7, { vector: v(0.6, 0, 0, 0.8) })]);
    const colA = ['psg_1', 'psg_2', 'psg_4', 'psg_5', 'psg_6', 'psg_7'];
    expect(await read('col_a', colA)).toEqual(expected(colA).map(([id, f]) => [id, (f as number[]).map((x) => expect.closeTo(x, 6))]));
    expect(await read('col_b', ['psg_3'])).toEqual([['psg_3', [0, 0.6, 0.8].map((x) => expect.closeTo(x, 6))]]);

    // Seq 2 deleted: seq 3's vector stays readable, in the row they share.
    await index.deleteByFile('col_a', 'fle_alone');
    expect(await read('col_b', ['psg_3'])).toEqual([['psg_3', [0, 0.6, 0.8].map((x) => expect.closeTo(x, 6))]]);
    const [nearest] = await index.searchVector('col_b', v(0, 0.6, 0.8), 1);
    expect(nearest).toMatchObject({ unitId: 'unt_3', distance: expect.closeTo(0, 5) });
    // Both gone: so is their row.
    await index.deleteByCollection('col_b');
    await index.whenPurged();
    expect(storedFloats()).toBe(5 * 4);
    const [seventh] = await index.searchVector('col_a', v(0.6, 0, 0, 0.8), 1);
    expect(seventh).toMatchObject({ unitId: 'unt_7', distance: expect.closeTo(0, 5) });
  });

  it('resumes the purge of a deleted collection at the next start', async () => {
    await index.upsert(Array.from({ length: DELETE_BATCH + 5 }, (_, i) => unit(i)));
    await index.close();
    // What a process killed right after marking the collection deleted leaves behind.
    db.prepare('INSERT INTO search_deleted_collections (collection_id, up_to_seq) VALUES (?, ?)').run('col_a', DELETE_BATCH + 5);

    index = new SqliteVectorIndex(db);
    await index.init();
    expect(await index.countUnits('col_a')).toBe(0);
    await index.whenPurged();
    expect(rows('SELECT count(*) FROM search_units')).toBe(0);
    expect(rows('SELECT count(*) FROM search_deleted_collections')).toBe(0);
  });

  it('replaces a unit in place: one row in each table', async () => {
    await index.upsert([unit(1)]);
    await index.upsert([unit(1, { text: 'lighthouse' })]);
    expect(rows('SELECT count(*) FROM search_units')).toBe(1);
    expect(storedFloats()).toBe(4);
    expect(rows(`SELECT count(*) FROM search_units_fts WHERE search_units_fts MATCH '"lantern"'`)).toBe(0);
  });

  it('tells its search thread of a replaced unit once when its write runs again (another write of its batch threw)', async () => {
    await index.upsert([unit(1)]);
    const seq = db.prepare("SELECT seq FROM search_units WHERE id = 'unt_1'").pluck().get() as number;
    const postRemove = jest.spyOn(
      (index as unknown as { mirror: { postRemove: (c: string | null, seqs: number[]) => void } }).mirror,
      'postRemove',
    );
    // In the same turn, so in the same batch of the connection's group commit, after the upsert: the batch runs again.
    const upserted = index.upsert([unit(1, { text: 'lighthouse' })]);
    const failing = groupCommitOf(db).run(() => {
      throw new Error('another write');
    });
    await expect(failing).rejects.toThrow('another write');
    await upserted;
    expect(postRemove.mock.calls).toEqual([['col_a', [seq]]]);
    expect(rows('SELECT count(*) FROM search_units')).toBe(1);
  });

  it('rolls back a refused batch entirely, including the units it would have replaced', async () => {
    await index.upsert([unit(1), unit(2), unit(3, { collectionId: 'col_b', vector: Float32Array.from([1, 0, 0]) })]);
    // The replacement of unit 1 is valid; the unit for col_b is not, and is checked after it.
    const refused = [unit(1, { text: 'changed' }), unit(4, { collectionId: 'col_b', vector: Float32Array.from([1, 0]) })];

    await expect(index.upsert(refused)).rejects.toMatchObject({ code: ErrorCode.EMBEDDING_MISMATCH });

    expect(rows('SELECT count(*) FROM search_units')).toBe(3);
    expect(storedFloats()).toBe(4 + 4 + 3);
    expect(await index.searchText('col_a', 'changed', 10)).toEqual([]);
    expect((await index.searchText('col_a', 'lantern', 10)).map((h) => h.unitId).sort()).toEqual(['unt_1', 'unt_2']);
  });

  it('keeps its data across connections, and a vector table created by another connection is reused', async () => {
    await index.upsert([unit(1), unit(2, { vector: Float32Array.from([0, 1, 0, 0]) })]);
    await index.close();
    db.close();

    db = open();
    index = new SqliteVectorIndex(db);
    await index.init();
    const [nearest] = await index.searchVector('col_a', Float32Array.from([0, 2, 0, 0]), 1);
    expect(nearest).toMatchObject({ unitId: 'unt_2', distance: expect.closeTo(0, 5) });
    await index.upsert([unit(3)]);
    expect(await index.countUnits('col_a')).toBe(3);
  });

  it('moves the vectors of an earlier version (sqlite-vec tables) into its own table once, and searches them', async () => {
    await index.close();
    db.exec(`CREATE VIRTUAL TABLE search_vectors_4 USING vec0(collection_id TEXT PARTITION KEY, embedding FLOAT[4] distance_metric=L2)`);
    db.prepare(
      `INSERT INTO search_units (seq, id, collection_id, file_id, passage_id, dimension) VALUES (7, 'unt_old', 'col_a', 'fle_0', 'psg_0', 4)`,
    ).run();
    db.prepare(`INSERT INTO search_vectors_4 (rowid, collection_id, embedding) VALUES (7, 'col_a', ?)`).run(
      Buffer.from(Float32Array.from([0, 0, 1, 0]).buffer),
    );

    index = new SqliteVectorIndex(db);
    await index.init();

    expect(rows(`SELECT count(*) FROM sqlite_master WHERE name = 'search_vectors_4'`)).toBe(0);
    expect(await index.searchVector('col_a', Float32Array.from([0, 0, 3, 0]), 1)).toEqual([
      { unitId: 'unt_old', passageId: 'psg_0', fileId: 'fle_0', distance: expect.closeTo(0, 5) },
    ]);
  });

  it('restricts vector and keyword search to the files of a filter', async () => {
    await index.upsert(Array.from({ length: 9 }, (_, i) => unit(i)));
    const hits = await index.searchVector('col_a', Float32Array.from([1, 1, 1, 1]), 9, { fileIds: ['fle_1'] });
    expect(hits.map((h) => h.unitId).sort()).toEqual(['unt_1', 'unt_4', 'unt_7']);
    const words = await index.searchText('col_a', 'lantern', 9, { fileIds: ['fle_2', 'fle_missing'] });
    expect(words.map((h) => h.unitId).sort()).toEqual(['unt_2', 'unt_5', 'unt_8']);
    expect(await index.searchVector('col_a', Float32Array.from([1, 1, 1, 1]), 9, { fileIds: [] })).toEqual([]);
  });

  it('removes a deleted file from a collection searched by cells, before and after a restart', async () => {
    // Enough rows for cells in each search thread's share.
    const count = SEARCH_THREADS * EXACT_SCAN_BELOW + 2_000;
    const vectorOf = (i: number) => Float32Array.from({ length: 8 }, (_, d) => Math.cos(i * (d + 1)) + (i % 40) / 10);
    const many = Array.from({ length: count }, (_, i) => unit(i, { fileId: `fle_${i % 40}`, vector: vectorOf(i) }));
    for (let start = 0; start < count; start += 2_000) await index.upsert(many.slice(start, start + 2_000));
    // Searched once, so the collection is in the search thread (an upsert alone does not load it).
    await index.searchVector('col_a', vectorOf(0), 1);
    const settled = async () => {
      for (;;) {
        const [stats] = (await index.searchThreadStats()).collections;
        if (stats && !stats.building) return stats;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    expect((await settled()).cells).toBeGreaterThan(1);

    await index.deleteByFile('col_a', 'fle_3');
    const query = vectorOf(3);
    const check = async () => {
      expect(await index.countUnits('col_a')).toBe(count - count / 40);
      expect(await index.searchVector('col_a', query, 10, { fileIds: ['fle_3'] })).toEqual([]);
      const hits = await index.searchVector('col_a', query, 50);
      expect(hits).toHaveLength(50);
      expect(hits.filter((h) => h.fileId === 'fle_3')).toEqual([]);
    };
    await check();

    // A new process: the thread's cells are computed again from what the store holds.
    await index.close();
    index = new SqliteVectorIndex(db);
    await index.init();
    await check();
    expect((await settled()).size).toBe(count - count / 40);
    await check();
  }, 300_000);

  it('loads a stored collection in its search threads, each reading its share, consistent with writes made during the load', async () => {
    // Directions far enough apart that a row's own int8 codes are its nearest (all near one
    // direction, which rows the codes tie on depended on how the threads share them).
    const vectorOf = (i: number) => Float32Array.from({ length: 8 }, (_, d) => Math.sin((i + 1) * (d + 3)));
    await index.upsert(Array.from({ length: 50 }, (_, i) => unit(i, { vector: vectorOf(i) })));
    // Rows of the collection's earlier life (marked deleted, maybe not purged yet) and of another collection stay out.
    await index.deleteByCollection('col_a');
    const count = 5_000;
    const stored = Array.from({ length: count }, (_, i) => unit(1_000 + i, { fileId: `fle_${i % 10}`, vector: vectorOf(1_000 + i) }));
    for (let start = 0; start < count; start += 1_000) await index.upsert(stored.slice(start, start + 1_000));
    await index.upsert([unit(9_000, { collectionId: 'col_b', vector: vectorOf(9_000) })]);

    await index.close();
    index = new SqliteVectorIndex(db);
    await index.init();
    // Not awaited: the threads read while a file is deleted and a unit added.
    const first = index.searchVector('col_a', vectorOf(1_001), 1);
    await index.deleteByFile('col_a', 'fle_1');
    await index.upsert([unit(8_000, { fileId: 'fle_new', vector: vectorOf(8_000) })]);
    expect((await first)[0]?.unitId).toMatch(/^unt_/);

    const [stats] = (await index.searchThreadStats()).collections;
    expect(stats).toMatchObject({ collectionId: 'col_a', size: count - count / 10 + 1 });
    expect((await index.searchVector('col_a', vectorOf(8_000), 1))[0].unitId).toBe('unt_8000');
    expect((await index.searchVector('col_a', vectorOf(1_002), 1))[0].unitId).toBe('unt_1002');
    expect(await index.searchVector('col_a', vectorOf(1_001), 5, { fileIds: ['fle_1'] })).toEqual([]);

    // After the load: each removal goes to the thread that read the row from the store.
    await index.deleteByFile('col_a', 'fle_2');
    expect((await index.searchThreadStats()).collections[0]).toMatchObject({ size: count - (2 * count) / 10 + 1 });
    expect(await index.searchVector('col_a', vectorOf(1_002), 5, { fileIds: ['fle_2'] })).toEqual([]);
  }, 120_000);

  it('runs BM25 on a connection of its own that sees each committed write at once; in memory, on the one connection', async () => {
    await index.upsert([unit(1)]);
    expect((await index.searchText('col_a', 'lantern', 10)).map((h) => h.unitId)).toEqual(['unt_1']);
    await index.upsert([unit(2, { text: 'lantern lantern' })]);
    expect((await index.searchText('col_a', 'lantern', 10)).map((h) => h.unitId)).toEqual(['unt_2', 'unt_1']);
    await index.deleteByFile('col_a', 'fle_2');
    expect((await index.searchText('col_a', 'lantern', 10)).map((h) => h.unitId)).toEqual(['unt_1']);

    const memory = new Database(':memory:');
    const inMemory = new SqliteVectorIndex(memory);
    await inMemory.init();
    await inMemory.upsert([unit(1)]);
    expect((await inMemory.searchText('col_a', 'lantern', 10)).map((h) => h.unitId)).toEqual(['unt_1']);
    await inMemory.close();
    memory.close();
  });

  it("re-ranks a vector search's candidates in a thread of its own: the service's connection reads no float vector, the hits are the same", async () => {
    // Every statement the service's connection (its event loop) runs, as SQLite gives it.
    const executed: string[] = [];
    const traced = new Database(join(dir, 'traced.db'), { verbose: (sql) => executed.push(String(sql)) });
    traced.pragma('journal_mode = WAL');
    const tracedIndex = new SqliteVectorIndex(traced);
    const memory = new Database(':memory:');
    const inMemory = new SqliteVectorIndex(memory);
    try {
      const units = Array.from({ length: 300 }, (_, i) =>
        unit(i, { vector: Float32Array.from([1, Math.sin(i), Math.cos(i * 3), (i % 11) / 5]) }),
      );
      for (const each of [tracedIndex, inMemory]) {
        await each.init();
        await each.upsert(units);
      }
      executed.length = 0;
      const query = Float32Array.from([1, 0.3, -0.2, 0.9]);
      const hits = await tracedIndex.searchVector('col_a', query, 20);
      expect(hits).toHaveLength(20);
      expect(executed.filter((sql) => sql.includes('search_unit_vectors'))).toEqual([]);
      // On the one connection of an in-memory store, re-ranked there: the same hits, the same distances.
      expect(await inMemory.searchVector('col_a', query, 20)).toEqual(hits);
    } finally {
      await tracedIndex.close();
      await inMemory.close();
      traced.close();
      memory.close();
    }
  });

  it('reports itself unavailable once its database is closed', async () => {
    db.close();
    await expect(index.ping()).rejects.toMatchObject({ code: ErrorCode.UNAVAILABLE });
    db = open();
  });
});
