import { Connection, Schema } from 'mongoose';
import { FILE_LANES, FILE_STATUSES, Passage, PROGRESS_STAGES, StoredFile } from '../../domain/file.model';

/** The port's records, keyed by our id as `_id`. */
export type FileDoc = Omit<StoredFile, 'id'> & { _id: string };
export type PassageDoc = Omit<Passage, 'id'> & { _id: string };

const options = { versionKey: false, _id: false } as const;

const progressSchema = new Schema(
  {
    stage: { type: String, required: true, enum: PROGRESS_STAGES },
    done: { type: Number, required: true },
    total: { type: Number, required: true },
  },
  options,
);

const fileSchema = new Schema<FileDoc>(
  {
    _id: { type: String, required: true },
    collectionId: { type: String, required: true },
    name: { type: String, required: true },
    mime: { type: String, required: true },
    size: { type: Number, required: true, default: 0 },
    status: { type: String, required: true, enum: FILE_STATUSES },
    error: { type: String, default: null },
    lane: { type: String, required: true, enum: FILE_LANES, default: 'standard' },
    progress: { type: progressSchema, default: null },
    sourceUrl: { type: String, default: null },
    chunkCount: { type: Number, required: true, default: 0 },
    characterCount: { type: Number, required: true, default: 0 },
    // A flat object of user values (see file-metadata.ts); Mixed, so its keys are the user's.
    metadata: { type: Schema.Types.Mixed, default: {} },
    pages: { type: Number, default: null },
    title: { type: String, default: null },
    author: { type: String, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  options,
);
fileSchema.index({ collectionId: 1, createdAt: 1, _id: 1 });
fileSchema.index({ status: 1, _id: 1 });

const passageSchema = new Schema<PassageDoc>(
  {
    _id: { type: String, required: true },
    collectionId: { type: String, required: true, index: true },
    fileId: { type: String, required: true },
    index: { type: Number, required: true },
    // Not `required`: mongoose would refuse an empty string.
    content: { type: String, default: '' },
    page: { type: Number, default: null },
  },
  options,
);
passageSchema.index({ fileId: 1, index: 1 }, { unique: true });

export function contentModels(connection: Connection) {
  return {
    files: connection.models.File ?? connection.model<FileDoc>('File', fileSchema, 'files'),
    passages: connection.models.Passage ?? connection.model<PassageDoc>('Passage', passageSchema, 'passages'),
  };
}
