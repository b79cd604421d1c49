import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { IndexUnit } from '../../../domain/vector-index.port';
import { SqliteVectorIndex } from '../sqlite-vector-index.adapter';
import { toFts5Query } from '../fts5-query';
import { BoundedTextSearch } from './bounded-text-search';

/** The bound on one keyword search's work, with a bound of 5 units instead of 20,000. */
describe('BoundedTextSearch', () => {
  let db: Database.Database;
  let index: SqliteVectorIndex;
  const BOUND = 5;

  const unit = (i: number, text: string, collectionId = 'col_a'): IndexUnit => ({
    id: `unt_${String(i).padStart(2, '0')}`,
    collectionId,
    fileId: `fle_${i % 3}`,
    passageId: `psg_${i}`,
    text,
    vector: Float32Array.from([1, i % 7, i % 5, 1]),
  });
  const search = (text: string, k: number, fileIds?: string[]) =>
    new BoundedTextSearch(db, BOUND)
      .search({ query: toFts5Query(text)!, collectionId: 'col_a', after: 0, k, ...(fileIds ? { fileIds: JSON.stringify(fileIds) } : {}) })
      .map((row) => row.unitId);
  const unbounded = (text: string, k: number) =>
    new BoundedTextSearch(db, 1_000).search({ query: toFts5Query(text)!, collectionId: 'col_a', after: 0, k }).map((row) => row.unitId);

  beforeEach(async () => {
    db = new Database(':memory:');
    sqliteVec.load(db);
    index = new SqliteVectorIndex(db);
    await index.init();
    // Units 1-12 all hold "harbour"; "lantern" is in units 1 and 2 only (the oldest), twice in unit 2.
    const units = Array.from({ length: 12 }, (_, n) => unit(n + 1, `harbour tide ${n + 1}`));
    units[0] = unit(1, 'harbour lantern tide');
    units[1] = unit(2, 'harbour lantern lantern tide');
    // Another collection's units count for a word's commonness in the store, never in the answer.
    units.push(unit(13, 'lantern elsewhere', 'col_b'));
    await index.upsert(units);
  });

  afterEach(async () => {
    await index.close();
    db.close();
  });

  it('ranks a query matching no more units than the bound whole, as without one', () => {
    expect(search('lantern', 10)).toEqual(['unt_02', 'unt_01']);
    expect(search('lantern', 10)).toEqual(unbounded('lantern', 10));
    expect(search('lantern', 10, ['fle_2'])).toEqual(['unt_02']);
  });

  it('ranks only the newest units of a query whose words are all common', () => {
    const hits = search('harbour tide', 10);
    expect(hits).toHaveLength(BOUND);
    expect([...hits].sort()).toEqual(['unt_08', 'unt_09', 'unt_10', 'unt_11', 'unt_12']);
  });

  it('ranks the units holding its rarer words first when it mixes common ones in, then the newest', () => {
    // Bounded to the newest units alone, the old units holding "lantern" would be left out.
    const hits = search('harbour lantern', 4);
    expect(hits.slice(0, 2)).toEqual(['unt_02', 'unt_01']);
    expect(hits.slice(0, 2)).toEqual(unbounded('harbour lantern', 2));
    expect(hits).toHaveLength(4);
    expect(['unt_08', 'unt_09', 'unt_10', 'unt_11', 'unt_12']).toEqual(expect.arrayContaining(hits.slice(2)));
  });
});
