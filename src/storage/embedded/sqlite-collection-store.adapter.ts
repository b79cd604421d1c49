import { Page, PageRequest } from '../../common/page';
import { Collection, VisibleCollection } from '../../domain/collection.model';
import { CollectionStore } from '../../domain/collection-store.port';
import { SqliteDb, toSqlDate } from './sqlite-database';
import { SqliteMembershipScope } from './sqlite-membership-store.adapter';

interface CollectionRow {
  id: string;
  name: string;
  owner_id: string;
  created_at: string;
  updated_at: string;
  embedding_model: string | null;
  embedding_dimension: number | null;
}

const toCollection = (row: CollectionRow): Collection => ({
  id: row.id,
  name: row.name,
  ownerId: row.owner_id,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
  embeddingModel: row.embedding_model,
  embeddingDimension: row.embedding_dimension,
});

export class SqliteCollectionStore extends CollectionStore {
  private readonly statements;
  private readonly members: SqliteMembershipScope<CollectionRow>;
  private readonly createTx;
  private readonly deleteTx;

  constructor(db: SqliteDb) {
    super();
    this.members = new SqliteMembershipScope<CollectionRow>(db, 'collection', 'collections');
    this.statements = {
      insert: db.prepare(
        `INSERT INTO collections (id, name, owner_id, created_at, updated_at, embedding_model, embedding_dimension)
         VALUES (@id, @name, @owner_id, @created_at, @updated_at, NULL, NULL)`,
      ),
      get: db.prepare('SELECT * FROM collections WHERE id = ?'),
      delete: db.prepare('DELETE FROM collections WHERE id = ?'),
      claimEmbedding: db.prepare(
        `UPDATE collections SET embedding_model = ?, embedding_dimension = ?, updated_at = ?
         WHERE id = ? AND embedding_model IS NULL`,
      ),
    };
    this.createTx = db.transaction((c: Collection) => {
      this.statements.insert.run({
        id: c.id,
        name: c.name,
        owner_id: c.ownerId,
        created_at: toSqlDate(c.createdAt),
        updated_at: toSqlDate(c.updatedAt),
      });
      this.members.insertOwner(c.id, c.ownerId, c.createdAt);
    });
    this.deleteTx = db.transaction((id: string) => {
      this.members.deleteMembers(id);
      return this.statements.delete.run(id).changes > 0;
    });
  }

  async create(collection: Collection): Promise<void> {
    this.createTx(collection);
  }

  async get(id: string): Promise<Collection | null> {
    const row = this.statements.get.get(id) as CollectionRow | undefined;
    return row ? toCollection(row) : null;
  }

  async listVisible(userId: string, page: PageRequest): Promise<Page<VisibleCollection>> {
    return this.members.visible(userId, page, toCollection);
  }

  async delete(id: string): Promise<boolean> {
    return this.deleteTx(id);
  }

  async claimEmbedding(id: string, model: string, dimension: number): Promise<{ model: string; dimension: number }> {
    this.statements.claimEmbedding.run(model, dimension, new Date().toISOString(), id);
    const row = this.statements.get.get(id) as CollectionRow | undefined;
    if (!row || row.embedding_model === null || row.embedding_dimension === null) {
      return { model, dimension };
    }
    return { model: row.embedding_model, dimension: row.embedding_dimension };
  }
}
