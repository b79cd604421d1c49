/*
 * Generated embeddings that cluster the way a document collection's do, for benches at 100k-1M
 * units without embedding a million passages.
 *
 * Uniform noise is the wrong test for an approximate index: in 512 dimensions every point is
 * about as far from every other, which says nothing about real collections. Real sentence
 * embeddings are anisotropic (unrelated texts are not orthogonal) and nested: windows of one
 * passage sit close together, passages of one file a little further, files on one subject further
 * still, and topics are of very unequal size. This generator builds that hierarchy:
 *
 *   vector = normalise(w·common + topic + subtopic + file + passage + window)
 *
 * each level an isotropic Gaussian offset of its own scale, topics drawn Zipf-like (a few large,
 * many small). Cosine distances come out as: windows of one passage ~0.11, passages of one file
 * ~0.24, files of one subtopic ~0.36, one topic ~0.5, unrelated ~0.84 (the contrast of USE-lite on
 * prose: near neighbours at 0.1-0.4, unrelated text at 0.7-0.9). A query is a new text about one
 * existing passage: its vector is that passage's plus a query offset larger than a window's, so
 * its true neighbours are not much nearer than their file's other passages, the hard case for
 * recall.
 */

import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Deterministic, so runs compare (mulberry32). */
export function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

export interface ClusteredOptions {
  units: number;
  dimension?: number;
  seed?: number;
  /** Embedding units (sentence windows) per passage. */
  unitsPerPassage?: number;
  passagesPerFile?: number;
  /** A directory where the generated set is kept and read back by later runs (generating 1M takes minutes). */
  cacheDir?: string;
}

export interface ClusteredSet {
  dimension: number;
  /** `units` rows of `dimension` floats, unit length, row-major. */
  vectors: Float32Array;
  /** The file (0-based) of each unit; files hold consecutive units. */
  fileOf: Int32Array;
  /** The passage (0-based, global) of each unit. */
  passageOf: Int32Array;
  files: number;
  /** Query vectors near random passages, drawn from the same hierarchy. */
  queries(count: number, seed?: number): Float32Array[];
  row(i: number): Float32Array;
}

const COMMON_WEIGHT = Math.sqrt(0.5);
const TOPIC_SCALE = 1;
const SUBTOPIC_SCALE = Math.sqrt(0.5);
const FILE_SCALE = Math.sqrt(0.4);
const PASSAGE_SCALE = Math.sqrt(0.35);
const WINDOW_SCALE = Math.sqrt(0.35);
const QUERY_SCALE = Math.sqrt(0.6);
const SUBTOPICS_PER_TOPIC = 24;
const ZIPF_EXPONENT = 0.8;
/** Bytes per read or write of the kept set. */
const SLICE = 2 ** 30;

export function clusteredVectors(options: ClusteredOptions): ClusteredSet {
  if (!options.cacheDir) return generate(options);
  const d = options.dimension ?? 512;
  const base = join(
    options.cacheDir,
    `clustered-${options.units}-${d}-${options.seed ?? 2024}-${options.unitsPerPassage ?? 3}-${options.passagesPerFile ?? 20}`,
  );
  // In slices: a file of 3,000,000 x 512 floats (6 GB) is past what one Buffer or Uint8Array holds.
  const read = (suffix: string) => {
    const file = `${base}.${suffix}`;
    const buffer = new ArrayBuffer(statSync(file).size);
    const fd = openSync(file, 'r');
    try {
      for (let at = 0; at < buffer.byteLength;)
        at += readSync(
          fd,
          new Uint8Array(buffer, at, Math.min(SLICE, buffer.byteLength - at)),
          0,
          Math.min(SLICE, buffer.byteLength - at),
          at,
        );
    } finally {
      closeSync(fd);
    }
    return buffer;
  };
  if (existsSync(`${base}.json`)) {
    const { files } = JSON.parse(readFileSync(`${base}.json`, 'utf8')) as { files: number };
    return assemble(
      d,
      new Float32Array(read('vectors')),
      new Int32Array(read('fileOf')),
      new Int32Array(read('passageOf')),
      files,
      new Float32Array(read('passages')),
    );
  }
  const set = generate(options);
  const write = (suffix: string, a: ArrayBufferView) => {
    const fd = openSync(`${base}.${suffix}`, 'w');
    try {
      for (let at = 0; at < a.byteLength; at += SLICE)
        writeSync(fd, new Uint8Array(a.buffer, a.byteOffset + at, Math.min(SLICE, a.byteLength - at)));
    } finally {
      closeSync(fd);
    }
  };
  write('vectors', set.vectors);
  write('fileOf', set.fileOf);
  write('passageOf', set.passageOf);
  write('passages', set.passageVectors);
  writeFileSync(`${base}.json`, JSON.stringify({ files: set.files }));
  return set;
}

function generate(options: ClusteredOptions): ClusteredSet & { passageVectors: Float32Array } {
  const dimension = options.dimension ?? 512;
  const unitsPerPassage = options.unitsPerPassage ?? 3;
  const passagesPerFile = options.passagesPerFile ?? 20;
  const units = options.units;
  const random = prng(options.seed ?? 2024);
  let spare: number | null = null;
  const gaussian = (): number => {
    if (spare !== null) {
      const value = spare;
      spare = null;
      return value;
    }
    let u = 0;
    while (u === 0) u = random();
    const r = Math.sqrt(-2 * Math.log(u));
    const theta = 2 * Math.PI * random();
    spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  };
  /** An offset of expected length `scale`. */
  const offset = (scale: number): Float32Array => {
    const v = new Float32Array(dimension);
    const s = scale / Math.sqrt(dimension);
    for (let i = 0; i < dimension; i++) v[i] = gaussian() * s;
    return v;
  };
  const addNoise = (into: Float32Array, from: Float32Array, scale: number): Float32Array => {
    const s = scale / Math.sqrt(dimension);
    for (let i = 0; i < dimension; i++) into[i] = from[i] + gaussian() * s;
    return into;
  };

  const unitsPerFile = unitsPerPassage * passagesPerFile;
  const files = Math.ceil(units / unitsPerFile);
  // About one topic per 2,000 units, 24 subtopics each: 500 topics at 1M.
  const topics = Math.max(8, Math.round(units / 2_000));
  const weights = Array.from({ length: topics }, (_, t) => 1 / (t + 1) ** ZIPF_EXPONENT);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  weights.reduce((sum, w, t) => (cumulative[t] = sum + w / total), 0);
  const pickTopic = () => {
    const x = random();
    let lo = 0;
    let hi = topics - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  const common = offset(1);
  normaliseInPlace(common);
  const topicCentres = new Map<number, Float32Array>();
  const subtopicCentres = new Map<number, Float32Array>();
  const centreOf = (topic: number, subtopic: number): Float32Array => {
    const key = topic * SUBTOPICS_PER_TOPIC + subtopic;
    let centre = subtopicCentres.get(key);
    if (!centre) {
      let topicCentre = topicCentres.get(topic);
      if (!topicCentre) {
        topicCentre = offset(TOPIC_SCALE);
        for (let i = 0; i < dimension; i++) topicCentre[i] += COMMON_WEIGHT * common[i];
        topicCentres.set(topic, topicCentre);
      }
      centre = addNoise(new Float32Array(dimension), topicCentre, SUBTOPIC_SCALE);
      subtopicCentres.set(key, centre);
    }
    return centre;
  };

  const vectors = new Float32Array(units * dimension);
  const fileOf = new Int32Array(units);
  const passageOf = new Int32Array(units);
  /** Unnormalised passage vectors, for queries. */
  const passageVectors = new Float32Array(Math.ceil(units / unitsPerPassage) * dimension);
  let passages = 0;
  const fileVector = new Float32Array(dimension);
  const window = new Float32Array(dimension);
  let unit = 0;
  for (let file = 0; file < files && unit < units; file++) {
    addNoise(fileVector, centreOf(pickTopic(), Math.floor(random() * SUBTOPICS_PER_TOPIC)), FILE_SCALE);
    for (let p = 0; p < passagesPerFile && unit < units; p++) {
      const passageId = passages++;
      const passage = addNoise(passageVectors.subarray(passageId * dimension, (passageId + 1) * dimension), fileVector, PASSAGE_SCALE);
      for (let w = 0; w < unitsPerPassage && unit < units; w++, unit++) {
        addNoise(window, passage, WINDOW_SCALE);
        normaliseInPlace(window);
        vectors.set(window, unit * dimension);
        fileOf[unit] = file;
        passageOf[unit] = passageId;
      }
    }
  }

  return assemble(dimension, vectors, fileOf, passageOf, files, passageVectors.subarray(0, passages * dimension), options.seed ?? 2024);
}

function assemble(
  dimension: number,
  vectors: Float32Array,
  fileOf: Int32Array,
  passageOf: Int32Array,
  files: number,
  passageVectors: Float32Array,
  seed = 2024,
): ClusteredSet & { passageVectors: Float32Array } {
  const passages = passageVectors.length / dimension;
  return {
    dimension,
    vectors,
    fileOf,
    passageOf,
    files,
    passageVectors,
    row: (i) => vectors.subarray(i * dimension, (i + 1) * dimension),
    queries(count, querySeed = 7) {
      const pick = prng(querySeed);
      const noise = prng(seed ^ querySeed ^ 0x5bd1e995);
      return Array.from({ length: count }, () => {
        const p = Math.floor(pick() * passages);
        const q = new Float32Array(dimension);
        const s = QUERY_SCALE / Math.sqrt(dimension);
        for (let i = 0; i < dimension; i++) q[i] = passageVectors[p * dimension + i] + gaussianFrom(noise) * s;
        return normaliseInPlace(q);
      });
    },
  };
}

/** A standard normal draw from a uniform source (Box-Muller). */
function gaussianFrom(random: () => number): number {
  let u = 0;
  while (u === 0) u = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

export function normaliseInPlace(v: Float32Array): Float32Array {
  let squares = 0;
  for (let i = 0; i < v.length; i++) squares += v[i] * v[i];
  const norm = Math.sqrt(squares) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}

/** Exact top-k row indices by dot product (cosine on unit rows), restricted to `allowed` rows when given. */
export function exactTopK(set: ClusteredSet, query: Float32Array, k: number, allowed?: (row: number) => boolean): number[] {
  const { vectors, dimension } = set;
  const rows = vectors.length / dimension;
  const bestRow = new Int32Array(k).fill(-1);
  const bestDot = new Float64Array(k).fill(-Infinity);
  for (let r = 0; r < rows; r++) {
    if (allowed && !allowed(r)) continue;
    let dot = 0;
    const base = r * dimension;
    for (let i = 0; i < dimension; i++) dot += vectors[base + i] * query[i];
    if (dot <= bestDot[k - 1]) continue;
    let j = k - 1;
    while (j > 0 && bestDot[j - 1] < dot) {
      bestDot[j] = bestDot[j - 1];
      bestRow[j] = bestRow[j - 1];
      j--;
    }
    bestDot[j] = dot;
    bestRow[j] = r;
  }
  return Array.from(bestRow).filter((r) => r >= 0);
}
