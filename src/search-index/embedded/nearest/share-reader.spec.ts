import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareVectorPairs, VECTOR_PAIRS_TABLE, writeVectorPairs } from '../vector-pairs';
import { READ_STEP, ShareReader } from './share-reader';

/** A search thread's read of its share, straight from a store's tables. */
describe('ShareReader', () => {
  let dir: string;
  let file: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-share-reader-'));
    file = join(dir, 'index.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(`
      CREATE TABLE search_units (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, collection_id TEXT NOT NULL,
        file_id TEXT NOT NULL, passage_id TEXT NOT NULL, dimension INTEGER NOT NULL);
      CREATE INDEX search_units_collection_seq ON search_units (collection_id, seq);
      CREATE TABLE search_unit_vectors (seq INTEGER PRIMARY KEY, vector BLOB NOT NULL);
      ${VECTOR_PAIRS_TABLE};`);
    const unit = db.prepare('INSERT INTO search_units VALUES (?, ?, ?, ?, ?, ?)');
    const vector = db.prepare('INSERT INTO search_unit_vectors VALUES (?, ?)');
    const pairs = prepareVectorPairs(db);
    // The lower seqs one a row (as older stores hold them), the rest two a row, written in batches
    // of an odd size so that batches start on odd and even seqs alike.
    const oneARow = 2 * READ_STEP + 17;
    let batch: { first: number; blobs: Buffer[] } = { first: oneARow + 1, blobs: [] };
    db.transaction(() => {
      // Seqs 1..n: col_a's rows, every seventh another collection's, every eleventh of another dimension.
      for (let seq = 1; seq <= 6 * READ_STEP + 300; seq++) {
        const dimension = seq % 11 === 0 ? 3 : 4;
        unit.run(seq, `unt_${seq}`, seq % 7 === 0 ? 'col_b' : 'col_a', `fle_${seq % 5}`, `psg_${seq}`, dimension);
        const blob = Buffer.from(Float32Array.from({ length: dimension }, (_, i) => seq + i / 10).buffer);
        if (seq <= oneARow) vector.run(seq, blob);
        else batch.blobs.push(blob);
        if (batch.blobs.length === 255) {
          writeVectorPairs(pairs, batch.first, batch.blobs);
          batch = { first: seq + 1, blobs: [] };
        }
      }
      writeVectorPairs(pairs, batch.first, batch.blobs);
    })();
    db.close();
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("gives its share's rows (whole vector pairs) of the collection and dimension, in seq order, in steps of READ_STEP, up to the bound", () => {
    const after = 5;
    const upTo = 6 * READ_STEP + 250;
    const wanted = (shard: number) =>
      Array.from({ length: upTo - after }, (_, i) => after + 1 + i).filter(
        (seq) => seq % 7 !== 0 && seq % 11 !== 0 && Math.floor(seq / 2) % 2 === shard,
      );
    for (const shard of [0, 1]) {
      const reader = new ShareReader('col_a', 4, { file, after, upTo }, 2, shard);
      const seqs: number[] = [];
      const steps: number[] = [];
      let mismatches = 0;
      for (let batch = reader.next(); batch; batch = reader.next()) {
        steps.push(batch.seqs.length);
        batch.seqs.forEach((seq, i) => {
          seqs.push(seq);
          const floats = Float32Array.from([seq, seq + 0.1, seq + 0.2, seq + 0.3]);
          if (batch.fileIds[i] !== `fle_${seq % 5}` || floats.some((value, d) => batch.vectors[i * 4 + d] !== value)) mismatches++;
        });
      }
      expect(mismatches).toBe(0);
      expect(seqs).toEqual(wanted(shard));
      expect(steps.length).toBeGreaterThan(2);
      expect(steps.slice(0, -1).every((rows) => rows === READ_STEP)).toBe(true);
    }
  });

  it('gives nothing for a collection without rows in the range', () => {
    expect(new ShareReader('col_c', 4, { file, after: 0, upTo: 100 }, 2, 0).next()).toBeUndefined();
    expect(new ShareReader('col_a', 4, { file, after: 100, upTo: 100 }, 2, 0).next()).toBeUndefined();
  });
});
