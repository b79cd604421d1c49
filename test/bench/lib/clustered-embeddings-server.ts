/*
 * A fast OpenAI-compatible `/v1/embeddings` endpoint on 127.0.0.1 for service benches: it answers
 * 512-d vectors that cluster like a document collection's (the hierarchy of clustered-vectors.ts),
 * computed from tags in the text instead of a model, so a million passages embed in seconds.
 *
 * A text tagged `f<file> p<passage>` (the first such tags in it) gets
 *   normalise(common + topic(file) + subtopic(file) + file + passage + window noise of the text)
 * and a query `q f<file> p<passage>` gets the passage's vector plus a query offset: a question
 * about that passage. Every component is seeded by its ids (a window's noise is one of a fixed pool,
 * and a passage's offset of fixed pools, picked by hashes), so any process computes the same vector.
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

/** The text's unit vector (see the top of this file). */
export function taggedVector(text: string): Float32Array {
  return taggedVectorInto(text, new Float32Array(DIMENSION));
}

/** taggedVector, written into `v` (DIMENSION floats). */
function taggedVectorInto(text: string, v: Float32Array): Float32Array {
  const tags = /\bf(\d+) p(\d+)\b/.exec(text);
  const file = tags ? Number(tags[1]) : hash(text) % 1_000_000;
  const passage = tags ? Number(tags[2]) : 0;
  v.set(fileVector(file));
  const offset = (hash(`passage ${file} ${passage}`) % PASSAGE_POOL) * DIMENSION;
  for (let i = 0; i < DIMENSION; i++) v[i] += passagePool[offset + i];
  if (text.startsWith('q ')) addOffset(v, `window ${text}`, QUERY);
  else {
    const noise = (hash(text) % WINDOW_POOL) * DIMENSION;
    for (let i = 0; i < DIMENSION; i++) v[i] += windowPool[noise + i];
  }
  let squares = 0;
  for (let i = 0; i < DIMENSION; i++) squares += v[i] * v[i];
  const norm = Math.sqrt(squares);
  for (let i = 0; i < DIMENSION; i++) v[i] /= norm;
  return v;
}

/**
 * The answer's body, written by hand: `encoding_format: "base64"` (OpenAI's compact form, which the
 * service asks for) gives each vector as base64 of its little-endian float32s, written straight into
 * the body's bytes (a string of the whole answer cost this process more than its vectors: building
 * it and encoding it again to send); otherwise arrays of numbers to 6 decimals. JSON.stringify of
 * full-precision doubles cost more than computing them.
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
  const vectors = new Float32Array(input.length * DIMENSION);
  const bytes = Buffer.from(vectors.buffer);
  const encodedLength = Math.ceil((DIMENSION * 4) / 3) * 4;
  const itemHead = (index: number) => `${index === 0 ? '' : ','}{"object":"embedding","index":${index},"embedding":"`;
  let size = head.length + tail.length;
  for (let index = 0; index < input.length; index++) size += itemHead(index).length + encodedLength + 2;
  const body = Buffer.allocUnsafe(size);
  let at = body.write(head, 0, 'latin1');
  input.forEach((text, index) => {
    taggedVectorInto(text, vectors.subarray(index * DIMENSION, (index + 1) * DIMENSION));
    at += body.write(itemHead(index), at, 'latin1');
    at += body.write(bytes.toString('base64', index * DIMENSION * 4, (index + 1) * DIMENSION * 4), at, 'latin1');
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
