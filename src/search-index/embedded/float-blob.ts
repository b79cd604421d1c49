import { isUnitLength, l2Normalize } from '../../embeddings/vectors';

/** The floats of a stored blob: a view when aligned, else a copy (SQLite's buffers may start anywhere). */
export function floatsOf(blob: Buffer): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

/** The floats of a blob SQLite handed over (a buffer of its own): a view when aligned, else a copy. */
export function ownFloats(blob: Buffer): Float32Array<ArrayBuffer> {
  if (blob.byteOffset % 4 === 0 && blob.buffer instanceof ArrayBuffer)
    return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  const floats = new Float32Array(blob.byteLength / 4);
  new Uint8Array(floats.buffer).set(blob);
  return floats;
}

/** A unit's float vector as loads read it. */
export interface VectorRow {
  seq: number;
  fileId: string;
  vector: Buffer;
}

/** Rows as a search thread takes them in: `seqs.length` rows of `dimension` floats. */
export interface VectorBatch {
  seqs: Float64Array<ArrayBuffer>;
  fileIds: string[];
  vectors: Float32Array<ArrayBuffer>;
}

/**
 * Stored rows packed into one batch of `dimension` floats each; rows of another dimension (a
 * collection re-embedded meanwhile) are left out, as their add would be refused.
 */
export function packRows(rows: readonly VectorRow[], dimension: number): VectorBatch {
  const same = rows.filter((row) => row.vector.byteLength === dimension * 4);
  const vectors = new Float32Array(same.length * dimension);
  same.forEach((row, i) => vectors.set(floatsOf(row.vector), i * dimension));
  return { seqs: Float64Array.from(same, (row) => row.seq), fileIds: same.map((row) => row.fileId), vectors };
}

/**
 * The vector scaled to unit length, as a little-endian float32 blob: a view of `vector` when it
 * already is (embedders hand over unit vectors; scaling them again copied every vector), else a
 * scaled copy. `squares` is its sum of squares, taken by the check every upsert makes
 * (dimensionsByCollection): a second pass over each vector only to find it unit length again cost
 * the ingesting process its share of the passes over every vector.
 */
export function normalisedBlob(vector: Float32Array, squares: number): Buffer {
  const unit = isUnitLength(squares) ? vector : l2Normalize(vector);
  return Buffer.from(unit.buffer, unit.byteOffset, unit.byteLength);
}

/** 1 - cosine similarity of a unit-length query and a stored unit-length vector. */
export function cosineDistanceToUnit(query: Float32Array, blob: Buffer): number {
  const stored = floatsOf(blob);
  let dot = 0;
  for (let i = 0; i < query.length; i++) dot += query[i] * stored[i];
  return Math.min(2, Math.max(0, 1 - dot));
}
