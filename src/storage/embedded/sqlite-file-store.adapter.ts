import { Page, PageRequest } from '../../common/page';
import type { FileFilter } from '../../domain/file-filter';
import type { FileMetadata } from '../../domain/file-metadata';
import { FileStatusTotals, foldFileStats, FileStore, FileUpdate } from '../../domain/file-store.port';
import { FileContentStats, FileLane, FileProgress, FileStatus, Passage, StoredFile } from '../../domain/file.model';
import { GroupCommit, groupCommitOf } from './group-commit';
import { SqliteDb, toSqlDate } from './sqlite-database';
import { sqlFilter } from './sqlite-file-filter';

interface FileRow {
  id: string;
  collection_id: string;
  name: string;
  mime: string;
  size: number;
  status: FileStatus;
  error: string | null;
  lane: FileLane;
  progress: string | null;
  source_url: string | null;
  chunk_count: number;
  character_count: number;
  metadata: string;
  pages: number | null;
  title: string | null;
  author: string | null;
  created_at: string;
  updated_at: string;
}

interface PassageRow {
  id: string;
  collection_id: string;
  file_id: string;
  idx: number;
  content: string;
  page: number | null;
}

const toFile = (row: FileRow): StoredFile => ({
  id: row.id,
  collectionId: row.collection_id,
  name: row.name,
  mime: row.mime,
  size: row.size,
  status: row.status,
  error: row.error,
  lane: row.lane,
  progress: row.progress ? (JSON.parse(row.progress) as FileProgress) : null,
  sourceUrl: row.source_url,
  chunkCount: row.chunk_count,
  characterCount: row.character_count,
  metadata: JSON.parse(row.metadata) as FileMetadata,
  pages: row.pages,
  title: row.title,
  author: row.author,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

const toPassage = (row: PassageRow): Passage => ({
  id: row.id,
  collectionId: row.collection_id,
  fileId: row.file_id,
  index: row.idx,
  content: row.content,
  page: row.page,
});

const UPDATABLE: Record<keyof FileUpdate, string> = {
  mime: 'mime',
  size: 'size',
  error: 'error',
  chunkCount: 'chunk_count',
  characterCount: 'character_count',
  lane: 'lane',
  progress: 'progress',
  metadata: 'metadata',
  pages: 'pages',
  title: 'title',
  author: 'author',
};

const progressColumn = (progress: FileProgress | null): string | null => (progress ? JSON.stringify(progress) : null);

export class SqliteFileStore extends FileStore {
  private readonly statements;
  /**
   * Every write commits through the connection's group commit: a write lock another process holds
   * (a worker process writing a file's vectors) is asked for again from the event loop rather than
   * waited for in SQLite's busy wait, which sleeps the whole process, and an upload's record waits
   * no request behind it.
   */
  private readonly group: GroupCommit;

  constructor(private readonly db: SqliteDb) {
    super();
    this.group = groupCommitOf(db);
    this.statements = {
      insert: db.prepare(
        `INSERT INTO files (id, collection_id, name, mime, size, status, error, lane, progress, source_url, chunk_count, character_count,
                            metadata, pages, title, author, created_at, updated_at)
         VALUES (@id, @collection_id, @name, @mime, @size, @status, @error, @lane, @progress, @source_url, @chunk_count, @character_count,
                 @metadata, @pages, @title, @author, @created_at, @updated_at)`,
      ),
      get: db.prepare('SELECT * FROM files WHERE id = ? AND collection_id = ?'),
      list: db.prepare('SELECT * FROM files WHERE collection_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?'),
      count: db.prepare('SELECT COUNT(*) FROM files WHERE collection_id = ?').pluck(),
      delete: db.prepare('DELETE FROM files WHERE id = ?'),
      deleteByCollection: db.prepare('DELETE FROM files WHERE collection_id = ?'),
      stats: db.prepare(
        `SELECT status, COUNT(*) AS files, COALESCE(SUM(size), 0) AS bytes,
                COALESCE(SUM(chunk_count), 0) AS chunks, COALESCE(SUM(character_count), 0) AS characters
         FROM files WHERE collection_id = ? GROUP BY status`,
      ),
      insertPassage: db.prepare('INSERT INTO passages (id, collection_id, file_id, idx, content, page) VALUES (?, ?, ?, ?, ?, ?)'),
      deletePassages: db.prepare('DELETE FROM passages WHERE file_id = ?'),
      // Through the collection's files (files_collection, then passages_file): passages have no
      // index on collection_id, and `WHERE collection_id = ?` read every passage of every
      // collection (0.58 s beside 300,000 passages of another to delete 10).
      deletePassagesByCollection: db.prepare('DELETE FROM passages WHERE file_id IN (SELECT id FROM files WHERE collection_id = ?)'),
      listPassages: db.prepare('SELECT * FROM passages WHERE file_id = ? AND idx > ? ORDER BY idx LIMIT ?'),
      // Any number of ids as one JSON array, one statement prepared once: a statement prepared for
      // each list cost a third of a search's reads of its files and passages.
      filesByIds: db.prepare('SELECT * FROM files WHERE id IN (SELECT value FROM json_each(?))'),
      passagesByIds: db.prepare('SELECT * FROM passages WHERE id IN (SELECT value FROM json_each(?))'),
    };
  }

  async create(file: StoredFile): Promise<void> {
    const row = {
      id: file.id,
      collection_id: file.collectionId,
      name: file.name,
      mime: file.mime,
      size: file.size,
      status: file.status,
      error: file.error,
      lane: file.lane,
      progress: progressColumn(file.progress),
      source_url: file.sourceUrl,
      chunk_count: file.chunkCount,
      character_count: file.characterCount,
      metadata: JSON.stringify(file.metadata),
      pages: file.pages,
      title: file.title,
      author: file.author,
      created_at: toSqlDate(file.createdAt),
      updated_at: toSqlDate(file.updatedAt),
    };
    await this.group.run(() => this.statements.insert.run(row));
  }

  async get(collectionId: string, fileId: string): Promise<StoredFile | null> {
    const row = this.statements.get.get(fileId, collectionId) as FileRow | undefined;
    return row ? toFile(row) : null;
  }

  async list(
    collectionId: string,
    page: PageRequest,
    statuses: readonly FileStatus[] = [],
    filter?: FileFilter,
  ): Promise<Page<StoredFile>> {
    if (statuses.length === 0 && !filter) {
      const rows = this.statements.list.all(collectionId, page.limit, page.offset) as FileRow[];
      return { items: rows.map(toFile), total: this.statements.count.get(collectionId) as number };
    }
    const condition = filter ? sqlFilter(filter) : { sql: '1', params: [] };
    const statusIn = statuses.length ? `AND status IN (${statuses.map(() => '?').join(', ')})` : '';
    const where = `FROM files WHERE collection_id = ? ${statusIn} AND ${condition.sql}`;
    const params = [collectionId, ...statuses, ...condition.params];
    const rows = this.db
      .prepare(`SELECT * ${where} ORDER BY created_at, id LIMIT ? OFFSET ?`)
      .all(...params, page.limit, page.offset) as FileRow[];
    const total = this.db
      .prepare(`SELECT COUNT(*) ${where}`)
      .pluck()
      .get(...params) as number;
    return { items: rows.map(toFile), total };
  }

  async matchingIds(collectionId: string, filter: FileFilter, limit: number): Promise<string[]> {
    const condition = sqlFilter(filter);
    return this.db
      .prepare(`SELECT id FROM files WHERE collection_id = ? AND status = 'indexed' AND ${condition.sql} LIMIT ?`)
      .pluck()
      .all(collectionId, ...condition.params, limit) as string[];
  }

  async getMany(ids: readonly string[]): Promise<StoredFile[]> {
    return this.byIds<FileRow>('files', ids).map(toFile);
  }

  async transition(fileId: string, from: readonly FileStatus[], to: FileStatus, update: FileUpdate = {}): Promise<boolean> {
    if (from.length === 0) return false;
    const { assignments, values } = this.assignments(update);
    const sql = `UPDATE files SET status = ?, ${assignments} WHERE id = ? AND status IN (${from.map(() => '?').join(', ')})`;
    return this.group.run(() => this.db.prepare(sql).run(to, ...values, fileId, ...from).changes > 0);
  }

  async update(fileId: string, update: FileUpdate): Promise<boolean> {
    const { assignments, values } = this.assignments(update);
    return this.group.run(() => this.db.prepare(`UPDATE files SET ${assignments} WHERE id = ?`).run(...values, fileId).changes > 0);
  }

  async listByStatus(statuses: readonly FileStatus[], limit: number, afterId = ''): Promise<StoredFile[]> {
    if (statuses.length === 0) return [];
    const sql = `SELECT * FROM files WHERE status IN (${statuses.map(() => '?').join(', ')}) AND id > ? ORDER BY id LIMIT ?`;
    return (this.db.prepare(sql).all(...statuses, afterId, limit) as FileRow[]).map(toFile);
  }

  async delete(fileId: string): Promise<boolean> {
    // Passages go with the file through ON DELETE CASCADE.
    return this.group.run(() => this.statements.delete.run(fileId).changes > 0);
  }

  async deleteByCollection(collectionId: string): Promise<number> {
    return this.group.run(() => {
      this.statements.deletePassagesByCollection.run(collectionId);
      return this.statements.deleteByCollection.run(collectionId).changes;
    });
  }

  async stats(collectionId: string): Promise<FileContentStats> {
    return foldFileStats(this.statements.stats.all(collectionId) as FileStatusTotals[]);
  }

  async insertPassages(passages: readonly Passage[]): Promise<void> {
    if (passages.length === 0) return;
    await this.group.run(() => {
      for (const p of passages) this.statements.insertPassage.run(p.id, p.collectionId, p.fileId, p.index, p.content, p.page);
    });
  }

  async deletePassages(fileId: string): Promise<void> {
    await this.group.run(() => this.statements.deletePassages.run(fileId));
  }

  async getPassages(ids: readonly string[]): Promise<Passage[]> {
    return this.byIds<PassageRow>('passages', ids).map(toPassage);
  }

  async listPassages(fileId: string, afterIndex: number, limit: number): Promise<Passage[]> {
    return (this.statements.listPassages.all(fileId, afterIndex, limit) as PassageRow[]).map(toPassage);
  }

  private byIds<Row>(table: 'files' | 'passages', ids: readonly string[]): Row[] {
    if (ids.length === 0) return [];
    const select = table === 'files' ? this.statements.filesByIds : this.statements.passagesByIds;
    return select.all(JSON.stringify(ids)) as Row[];
  }

  /** `updated_at` always, plus the given fields; column names come from a fixed map, never from input. */
  private assignments(update: FileUpdate): { assignments: string; values: unknown[] } {
    const columns = ['updated_at = ?'];
    const values: unknown[] = [new Date().toISOString()];
    for (const [field, column] of Object.entries(UPDATABLE) as [keyof FileUpdate, string][]) {
      if (update[field] === undefined) continue;
      columns.push(`${column} = ?`);
      values.push(
        field === 'progress'
          ? progressColumn(update.progress ?? null)
          : field === 'metadata'
            ? JSON.stringify(update.metadata)
            : update[field],
      );
    }
    return { assignments: columns.join(', '), values };
  }
}
