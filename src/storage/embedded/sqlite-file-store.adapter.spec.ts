import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredFile } from '../../domain/file.model';
import { openSqliteDatabase, SqliteDb } from './sqlite-database';
import { SqliteFileStore } from './sqlite-file-store.adapter';

const file = (id: string, collectionId: string): StoredFile => ({
  id,
  collectionId,
  name: `${id}.txt`,
  mime: 'text/plain',
  size: 1,
  status: 'indexed',
  error: null,
  lane: 'standard',
  progress: null,
  sourceUrl: null,
  chunkCount: 2,
  characterCount: 2,
  metadata: {},
  pages: null,
  title: null,
  author: null,
  createdAt: new Date(),
  updatedAt: new Date(),
});

describe('SqliteFileStore.deleteByCollection', () => {
  let dir: string;
  let db: SqliteDb;
  let statements: string[];
  let store: SqliteFileStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'file-store-'));
    db = openSqliteDatabase(dir);
    statements = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      statements.push(sql);
      return prepare(sql);
    }) as typeof db.prepare;
    store = new SqliteFileStore(db);
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("deletes the collection's files and passages and leaves other collections' alone", async () => {
    for (const [fileId, collectionId] of [
      ['fle_a', 'col_a'],
      ['fle_b', 'col_b'],
    ]) {
      await store.create(file(fileId, collectionId));
      await store.insertPassages(
        [0, 1].map((index) => ({ id: `psg_${fileId}_${index}`, collectionId, fileId, index, content: 'text', page: null })),
      );
    }
    expect(await store.deleteByCollection('col_a')).toBe(1);
    expect(await store.getPassages(['psg_fle_a_0', 'psg_fle_a_1'])).toEqual([]);
    expect((await store.getPassages(['psg_fle_b_0', 'psg_fle_b_1'])).map((p) => p.id)).toEqual(['psg_fle_b_0', 'psg_fle_b_1']);
  });

  it("finds a collection's passages through an index, not by reading every collection's", () => {
    const deletes = statements.filter((sql) => /^\s*DELETE FROM passages\b/i.test(sql) && /collection_id/i.test(sql));
    expect(deletes).toHaveLength(1);
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${deletes[0]}`).all('col_a') as { detail: string }[]).map((row) => row.detail);
    expect(plan.join('; ')).not.toMatch(/\bSCAN passages\b/);
  });
});
