import { Connection, Model } from 'mongoose';
import { Page, PageRequest } from '../../common/page';
import type { FileFilter } from '../../domain/file-filter';
import { FileStatusTotals, foldFileStats, FileStore, FileUpdate } from '../../domain/file-store.port';
import { FileContentStats, FileStatus, Passage, StoredFile } from '../../domain/file.model';
import { contentModels, FileDoc, PassageDoc } from './content.schema';
import { mongoFilter } from './mongo-file-filter';

const toFile = (doc: FileDoc): StoredFile => ({
  id: doc._id,
  collectionId: doc.collectionId,
  name: doc.name,
  mime: doc.mime,
  size: doc.size,
  status: doc.status,
  error: doc.error ?? null,
  lane: doc.lane ?? 'standard',
  progress: doc.progress ? { stage: doc.progress.stage, done: doc.progress.done, total: doc.progress.total } : null,
  sourceUrl: doc.sourceUrl ?? null,
  chunkCount: doc.chunkCount ?? 0,
  characterCount: doc.characterCount ?? 0,
  metadata: doc.metadata ?? {},
  pages: doc.pages ?? null,
  title: doc.title ?? null,
  author: doc.author ?? null,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

const toPassage = (doc: PassageDoc): Passage => ({
  id: doc._id,
  collectionId: doc.collectionId,
  fileId: doc.fileId,
  index: doc.index,
  content: doc.content,
  page: doc.page ?? null,
});

const withTimestamp = (update: FileUpdate) => {
  const set: Record<string, unknown> = { updatedAt: new Date() };
  for (const [field, value] of Object.entries(update)) if (value !== undefined) set[field] = value;
  return set;
};

export class MongoFileStore extends FileStore {
  private readonly files: Model<FileDoc>;
  private readonly passages: Model<PassageDoc>;

  constructor(connection: Connection) {
    super();
    const models = contentModels(connection);
    this.files = models.files;
    this.passages = models.passages;
  }

  async create(file: StoredFile): Promise<void> {
    const { id, ...rest } = file;
    await this.files.create({ _id: id, ...rest });
  }

  async get(collectionId: string, fileId: string): Promise<StoredFile | null> {
    const doc = await this.files.findOne({ _id: fileId, collectionId }).lean<FileDoc>();
    return doc ? toFile(doc) : null;
  }

  async list(
    collectionId: string,
    page: PageRequest,
    statuses: readonly FileStatus[] = [],
    filter?: FileFilter,
  ): Promise<Page<StoredFile>> {
    const query = {
      collectionId,
      ...(statuses.length ? { status: { $in: [...statuses] } } : {}),
      ...(filter ? { $and: [mongoFilter(filter)] } : {}),
    };
    const [docs, total] = await Promise.all([
      this.files.find(query).sort({ createdAt: 1, _id: 1 }).skip(page.offset).limit(page.limit).lean<FileDoc[]>(),
      this.files.countDocuments(query),
    ]);
    return { items: docs.map(toFile), total };
  }

  async matchingIds(collectionId: string, filter: FileFilter, limit: number): Promise<string[]> {
    const docs = await this.files
      .find({ collectionId, status: 'indexed', $and: [mongoFilter(filter)] }, { _id: 1 })
      .limit(limit)
      .lean<{ _id: string }[]>();
    return docs.map((doc) => doc._id);
  }

  async getMany(ids: readonly string[]): Promise<StoredFile[]> {
    if (ids.length === 0) return [];
    return (await this.files.find({ _id: { $in: ids } }).lean<FileDoc[]>()).map(toFile);
  }

  async transition(fileId: string, from: readonly FileStatus[], to: FileStatus, update: FileUpdate = {}): Promise<boolean> {
    const result = await this.files.updateOne({ _id: fileId, status: { $in: from } }, { $set: { ...withTimestamp(update), status: to } });
    return result.modifiedCount > 0;
  }

  async update(fileId: string, update: FileUpdate): Promise<boolean> {
    const result = await this.files.updateOne({ _id: fileId }, { $set: withTimestamp(update) });
    return result.matchedCount > 0;
  }

  async listByStatus(statuses: readonly FileStatus[], limit: number, afterId = ''): Promise<StoredFile[]> {
    const docs = await this.files
      .find({ status: { $in: statuses }, _id: { $gt: afterId } })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<FileDoc[]>();
    return docs.map(toFile);
  }

  async delete(fileId: string): Promise<boolean> {
    // The record goes last: while it exists, a retried delete still finds what is left to remove.
    await this.passages.deleteMany({ fileId });
    const result = await this.files.deleteOne({ _id: fileId });
    return result.deletedCount > 0;
  }

  async deleteByCollection(collectionId: string): Promise<number> {
    await this.passages.deleteMany({ collectionId });
    const result = await this.files.deleteMany({ collectionId });
    return result.deletedCount;
  }

  async stats(collectionId: string): Promise<FileContentStats> {
    const rows = await this.files.aggregate<Omit<FileStatusTotals, 'status'> & { _id: FileStatus }>([
      { $match: { collectionId } },
      {
        $group: {
          _id: '$status',
          files: { $sum: 1 },
          bytes: { $sum: '$size' },
          chunks: { $sum: '$chunkCount' },
          characters: { $sum: '$characterCount' },
        },
      },
    ]);
    return foldFileStats(rows.map(({ _id, ...totals }) => ({ status: _id, ...totals })));
  }

  async insertPassages(passages: readonly Passage[]): Promise<void> {
    if (passages.length === 0) return;
    await this.passages.insertMany(
      passages.map(({ id, ...rest }) => ({ _id: id, ...rest })),
      { ordered: false, lean: true },
    );
  }

  async deletePassages(fileId: string): Promise<void> {
    await this.passages.deleteMany({ fileId });
  }

  async getPassages(ids: readonly string[]): Promise<Passage[]> {
    if (ids.length === 0) return [];
    return (await this.passages.find({ _id: { $in: ids } }).lean<PassageDoc[]>()).map(toPassage);
  }

  async listPassages(fileId: string, afterIndex: number, limit: number): Promise<Passage[]> {
    const docs = await this.passages
      .find({ fileId, index: { $gt: afterIndex } })
      .sort({ index: 1 })
      .limit(limit)
      .lean<PassageDoc[]>();
    return docs.map(toPassage);
  }
}
