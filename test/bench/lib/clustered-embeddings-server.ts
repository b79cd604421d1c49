/*
 * A fast OpenAI-compatible `/v1/embeddings` endpoint on 127.0.0.1 for service benches: it answers
 * 512-d vectors that cluster like a document collection's (the hierarchy of clustered-vectors.ts),
 * computed from tags in the text instead of a model, so a million passages embed in seconds.
 *
 * A text tagged `f<file> p<passage>` (the first such tags in it) gets a mosaic of its file's
 * precomputed vectors, normalise(common + topic(file) + subtopic(file) + file + a passage offset +
 * window noise), half of its segments picked by the passage and half by the text (see MEMBERS
 * below); a query `q f<file> p<passage>` gets its passage's segments plus a query offset: a question
 * about that passage. Every component is seeded by its ids (offsets and noise from fixed pools,
 * picked by hashes), so any process computes the same vector.
 *
 *   node -r ./scripts/swc-register.js test/bench/lib/clustered-embeddings-server.ts   (prints its port)
 */
import { createServer } from 'node:http';

const DIMENSION = 512;
const TOPICS = 500;
const SUBTOPICS = 24;
const SCALE = { common: Math.sqrt(0.5), topic: 1, subtopic: Math.sqrt(0.5), file: Math.sqrt(0.4), passage: Math.sqrt(0.35) };
const WINDOW = Math.sqrt(0.35);
const QUERY = Math.sqrt(0.6);

function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0 || 1;
}

/** A Gaussian offset of expected length `scale`, seeded by `key`, added into `into`. */
function addOffset(into: Float32Array, key: string, scale: number): void {
  let seed = hash(key);
  const s = scale / Math.sqrt(DIMENSION);
  const uniform = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) + 1) / (2 ** 32 + 1);
  };
  for (let i = 0; i < DIMENSION; i += 2) {
    const r = Math.sqrt(-2 * Math.log(uniform()));
    const theta = 2 * Math.PI * uniform();
    into[i] += r * Math.cos(theta) * s;
    if (i + 1 < DIMENSION) into[i + 1] += r * Math.sin(theta) * s;
  }
}

const fileVectors = new Map<number, Float32Array>();
function fileVector(file: number): Float32Array {
  let v = fileVectors.get(file);
  if (!v) {
    v = new Float32Array(DIMENSION);
    // Topics of very unequal size: file f draws topic floor(T * u^2).
    const u = hash(`topic-of ${file}`) / 2 ** 32;
    const topic = Math.floor(TOPICS * u * u);
    addOffset(v, 'common', SCALE.common);
    addOffset(v, `topic ${topic}`, SCALE.topic);
    addOffset(v, `subtopic ${topic} ${hash(`sub ${file}`) % SUBTOPICS}`, SCALE.subtopic);
    addOffset(v, `file ${file}`, SCALE.file);
    if (fileVectors.size > 50_000) fileVectors.clear();
    fileVectors.set(file, v);
  }
  return v;
}

/**
 * Passage offsets and window noise drawn from fixed pools by hashes of their ids: a Gaussian draw
 * per passage or text cost more than the rest of the answer, and pools of 16,384 and 8,192
 * independent offsets cluster the same as fresh draws (a passage's neighbours are its file's).
 */
const PASSAGE_POOL = 16_384;
const WINDOW_POOL = 8_192;
function pool(size: number, name: string, scale: number): Float32Array {
  const offsets = new Float32Array(size * DIMENSION);
  for (let w = 0; w < size; w++) addOffset(offsets.subarray(w * DIMENSION, (w + 1) * DIMENSION), `${name} ${w}`, scale);
  return offsets;
}
const passagePool = pool(PASSAGE_POOL, 'passage', SCALE.passage);
const windowPool = pool(WINDOW_POOL, 'window', WINDOW);

/**
 * A text's vector is put together from precomputed pieces, with no float work and no base64
 * encoding per text (this process stands for a remote GPU server, but here it takes the cores the
 * service ingests with). Each file has MEMBERS vectors, file + a passage offset + window noise from
 * the pools, each cut into SEGMENTS of 48 floats (the last 32) and every segment scaled to its share
 * of unit length, so any mosaic of members' segments is a unit vector. 48 floats are 192 bytes, a
 * whole number of base64 groups: a segment's base64 is a slice of its member's, and a text's answer
 * is 11 copies of cached bytes.
 *
 * The even segments come from members picked by the passage (a hash of file and passage), the odd
 * ones from members picked by the text's hash: a passage's windows share about half their offset,
 * passages of a file share the file's vector, files cluster by topic as before. Each segment's offset
 * is one member's, and the members' offsets are independent Gaussians, so a mosaic's offset is a
 * Gaussian draw too; 32^5 choices per text keep a passage's windows distinct (a collision about
 * once in ten million passages, against once in 2,700 with the window pool alone).
 */
const MEMBERS = 32;
const MEMBER_BITS = 5;
const SEGMENT_FLOATS = 48;
const SEGMENTS = Math.ceil(DIMENSION / SEGMENT_FLOATS);
/** Characters of base64 a whole vector takes, and the offset of each segment's characters in it. */
const ENCODED_LENGTH = Math.ceil((DIMENSION * 4) / 3) * 4;
const segmentChar = (s: number) => Math.min((s * SEGMENT_FLOATS * 4 * 4) / 3, ENCODED_LENGTH);
const segmentFloat = (s: number) => Math.min(s * SEGMENT_FLOATS, DIMENSION);

interface FileMembers {
  /** MEMBERS unit vectors of DIMENSION floats, segment by segment scaled. */
  floats: Float32Array;
  /** Their base64, ENCODED_LENGTH characters each. */
  base64: Buffer;
}

const fileMembers = new Map<number, FileMembers>();
function membersOf(file: number): FileMembers {
  let members = fileMembers.get(file);
  if (!members) {
    const floats = new Float32Array(MEMBERS * DIMENSION);
    const base = fileVector(file);
    for (let m = 0; m < MEMBERS; m++) {
      const v = floats.subarray(m * DIMENSION, (m + 1) * DIMENSION);
      v.set(base);
      const passage = (hash(`member ${file} ${m}`) % PASSAGE_POOL) * DIMENSION;
      const noise = (hash(`noise ${file} ${m}`) % WINDOW_POOL) * DIMENSION;
      for (let i = 0; i < DIMENSION; i++) v[i] += passagePool[passage + i] + windowPool[noise + i];
      for (let s = 0; s < SEGMENTS; s++)
        scaleTo(v.subarray(segmentFloat(s), segmentFloat(s + 1)), Math.sqrt((segmentFloat(s + 1) - segmentFloat(s)) / DIMENSION));
    }
    // Each member encoded on its own: 2,048 bytes are not a whole number of base64 groups.
    const base64 = Buffer.allocUnsafe(MEMBERS * ENCODED_LENGTH);
    for (let m = 0; m < MEMBERS; m++) {
      base64.write(Buffer.from(floats.buffer, m * DIMENSION * 4, DIMENSION * 4).toString('base64'), m * ENCODED_LENGTH, 'latin1');
    }
    members = { floats, base64 };
    if (fileMembers.size >= 256) fileMembers.clear();
    fileMembers.set(file, members);
  }
  return members;
}

function scaleTo(v: Float32Array, length: number): void {
  let squares = 0;
  for (let i = 0; i < v.length; i++) squares += v[i] * v[i];
  const scale = length / Math.sqrt(squares);
  for (let i = 0; i < v.length; i++) v[i] *= scale;
}

/** An integer hash of two ids (no string built per text). */
function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ b;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Which member each segment of the text's vector comes from (see above), and the file's members. */
function mosaic(text: string, into: Uint8Array): FileMembers {
  const tags = /\bf(\d+) p(\d+)\b/.exec(text);
  const file = tags ? Number(tags[1]) : hash(text) % 1_000_000;
  const passage = tags ? Number(tags[2]) : 0;
  let byPassage = mix(file, passage);
  let byText = hash(text);
  for (let s = 0; s < SEGMENTS; s++) {
    if (s % 2 === 0) {
      into[s] = byPassage & (MEMBERS - 1);
      byPassage >>>= MEMBER_BITS;
    } else {
      into[s] = byText & (MEMBERS - 1);
      byText >>>= MEMBER_BITS;
    }
  }
  return membersOf(file);
}

const picks = new Uint8Array(SEGMENTS);

/**
 * The text's unit vector (see the top of this file and the mosaic above). A query `q f<file>
 * p<passage>` is its passage's segments (the others the file's alone) plus a query offset.
 */
export function taggedVector(text: string): Float32Array {
  const { floats } = mosaic(text, picks);
  const v = new Float32Array(DIMENSION);
  const query = text.startsWith('q ');
  const base = query ? fileVector(Number(/\bf(\d+)/.exec(text)?.[1] ?? hash(text) % 1_000_000)) : null;
  for (let s = 0; s < SEGMENTS; s++) {
    const from = segmentFloat(s);
    const to = segmentFloat(s + 1);
    if (base && s % 2 === 1) {
      const segment = v.subarray(from, to);
      segment.set(base.subarray(from, to));
      scaleTo(segment, Math.sqrt((to - from) / DIMENSION));
    } else v.set(floats.subarray(picks[s] * DIMENSION + from, picks[s] * DIMENSION + to), from);
  }
  if (query) {
    addOffset(
      v,
      `window ${text}`,
      QUERY / Math.sqrt(SCALE.common ** 2 + SCALE.topic ** 2 + SCALE.subtopic ** 2 + SCALE.file ** 2 + SCALE.passage ** 2),
    );
    scaleTo(v, 1);
  }
  return v;
}

/**
 * The answer's body, written by hand: `encoding_format: "base64"` (OpenAI's compact form, which the
 * service asks for) gives each vector as base64 of its little-endian float32s, copied segment by
 * segment from the file's members' base64 (queries are encoded one by one); otherwise arrays of
 * numbers to 6 decimals. JSON.stringify of full-precision doubles cost more than computing them.
 */
function answer(model: string, input: string[], base64: boolean): Buffer {
  const head = `{"object":"list","model":${JSON.stringify(model)},"data":[`;
  const tail = `],"usage":{"prompt_tokens":0,"total_tokens":0}}`;
  if (!base64) {
    const parts = input.map(
      (text, index) =>
        `{"object":"embedding","index":${index},"embedding":[${Array.from(taggedVector(text), (x) => x.toFixed(6)).join(',')}]}`,
    );
    return Buffer.from(`${head}${parts.join(',')}${tail}`);
  }
  const itemHead = (index: number) => `${index === 0 ? '' : ','}{"object":"embedding","index":${index},"embedding":"`;
  let size = head.length + tail.length;
  for (let index = 0; index < input.length; index++) size += itemHead(index).length + ENCODED_LENGTH + 2;
  const body = Buffer.allocUnsafe(size);
  let at = body.write(head, 0, 'latin1');
  input.forEach((text, index) => {
    at += body.write(itemHead(index), at, 'latin1');
    if (text.startsWith('q ')) at += body.write(Buffer.from(taggedVector(text).buffer).toString('base64'), at, 'latin1');
    else {
      const members = mosaic(text, picks).base64;
      for (let s = 0; s < SEGMENTS; s++) {
        const from = picks[s] * ENCODED_LENGTH;
        // set() of a view: Buffer's copy() took 1.4 µs a call here, most of this process's CPU.
        body.set(members.subarray(from + segmentChar(s), from + segmentChar(s + 1)), at);
        at += segmentChar(s + 1) - segmentChar(s);
      }
    }
    at += body.write('"}', at, 'latin1');
  });
  at += body.write(tail, at, 'latin1');
  if (at !== size) throw new Error(`answer of ${at} bytes, ${size} expected`);
  return body;
}

if (require.main === module) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { model: string; input: string[]; encoding_format?: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer(body.model, body.input, body.encoding_format === 'base64'));
    });
  });
  // An exit of its own on the bench's kill, so that --cpu-prof writes its profile.
  process.on('SIGTERM', () => process.exit(0));
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
  });
}
