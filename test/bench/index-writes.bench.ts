/*
 * The ingestion's write path alone, as a worker process does it: passages stored, then their units
 * upserted into the embedded index (512-d vectors, 255 units an upsert, one process and its
 * checkpoint thread), without HTTP, the embedder or the search threads. Reports, per unit, the CPU
 * of the process (its threads included), the bytes written and read through syscalls
 * (/proc/self/io: the WAL, the checkpoint), and the file's size; then reading the collection back
 * as two search threads' shares, and deleting files.
 *
 *   npm run bench -- index-writes        (BENCH_UNITS, default 120,000)
 *
 * BENCH_BEFORE_ROOT=<dir> (an earlier build's dist/ and node_modules/) runs that build too, the two
 * in turn, two rounds each. Each run is a process of its own, from the build's dist/.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_WORDS, figures } from './lib/bench-kit';

const UNITS = Number(process.env.BENCH_UNITS ?? 120_000);
const PASSAGES_PER_UPSERT = 85;
const WINDOWS = 3;
const UNITS_PER_FILE = 750;
const DELETED_FILES = 20;
const ROOT = join(__dirname, '..', '..');
const WORDS = BENCH_WORDS;

interface Result {
  cpuUs: number;
  writtenKb: number;
  readKb: number;
  fileMb: number;
  shareReadCpuUs: number;
  deleteCpuUs: number;
}

const load = () =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');

function io(): { read: number; written: number } {
  const text = readFileSync('/proc/self/io', 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(text)![1]);
  return { read: field('rchar'), written: field('wchar') };
}

const cpu = () => ((usage) => usage.user + usage.system)(process.cpuUsage());

function text(i: number): string {
  let words = `f${i} p${i % 250} s${i % WINDOWS}`;
  for (let k = 0; words.length < 290; k++) words += ` ${WORDS[(i + k * k) % WORDS.length]}`;
  return `${words}.`;
}

/** One run, in this process, of the build at `root` (its dist/). */
async function run(root: string): Promise<Result> {
  const dist = (path: string) => require(join(root, 'dist', 'src', path));
  const { openSqliteDatabase } = dist('storage/embedded/sqlite-database');
  const { SqliteVectorIndex } = dist('search-index/embedded/sqlite-vector-index.adapter');
  const { SqliteFileStore } = dist('storage/embedded/sqlite-file-store.adapter');
  const { ShareReader } = dist('search-index/embedded/nearest/share-reader');
  const { newId } = dist('common/ids');
  const pool = Array.from({ length: 64 }, () => {
    const v = Float32Array.from({ length: 512 }, () => Math.random() - 0.5);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
  const dir = mkdtempSync(join(tmpdir(), 'wcs-index-writes-'));
  const db = openSqliteDatabase(dir);
  const index = new SqliteVectorIndex(db, { answersSearches: false });
  await index.init();
  const files = new SqliteFileStore(db);
  const collectionId = newId('col');
  db.prepare(`INSERT INTO collections (id, name, owner_id, created_at, updated_at) VALUES (?, 'bench', 'usr_bench', '', '')`).run(
    collectionId,
  );
  const addFile = db.prepare(
    `INSERT INTO files (id, collection_id, name, mime, size, status, lane, created_at, updated_at) VALUES (?, ?, 'f', 'text/plain', 1, 'processing', 'standard', '', '')`,
  );
  const fileIds: string[] = [];
  let done = 0;
  // The first half warms the file up; the figures are the second half's.
  let mark = { cpu: 0, io: io(), at: 0 };
  while (done < UNITS) {
    if (fileIds.length <= done / UNITS_PER_FILE) {
      fileIds.push(newId('fle'));
      addFile.run(fileIds.at(-1), collectionId);
    }
    const fileId = fileIds.at(-1)!;
    const passages: object[] = [];
    const units: object[] = [];
    for (let p = 0; p < PASSAGES_PER_UPSERT; p++) {
      const passageId = newId('psg');
      const content = [0, 1, 2].map((w) => text(done + p * WINDOWS + w));
      passages.push({ id: passageId, collectionId, fileId, index: done / WINDOWS + p, content: content.join(' '), page: null });
      content.forEach((windowText, w) =>
        units.push({
          id: `${passageId}_${w}`,
          collectionId,
          fileId,
          passageId,
          text: windowText,
          vector: pool[(done + p * WINDOWS + w) % 64],
        }),
      );
    }
    await files.insertPassages(passages);
    await index.upsert(units);
    done += units.length;
    if (mark.at === 0 && done >= UNITS / 2) mark = { cpu: cpu(), io: io(), at: done };
  }
  const measured = done - mark.at;
  const after = io();
  const result: Result = {
    cpuUs: (cpu() - mark.cpu) / measured,
    writtenKb: (after.written - mark.io.written) / measured / 1024,
    readKb: (after.read - mark.io.read) / measured / 1024,
    fileMb: statSync(join(dir, 'service.db')).size / 1e6,
    shareReadCpuUs: 0,
    deleteCpuUs: 0,
  };
  const upTo = db.prepare('SELECT max(seq) FROM search_units').pluck().get() as number;
  const readStarted = cpu();
  let rows = 0;
  for (const shard of [0, 1]) {
    const reader = new ShareReader(collectionId, 512, { file: join(dir, 'service.db'), after: 0, upTo }, 2, shard);
    for (let batch = reader.next(); batch; batch = reader.next()) rows += batch.seqs.length;
  }
  result.shareReadCpuUs = (cpu() - readStarted) / rows;
  const unitsBefore = (await index.countUnits(collectionId)) as number;
  const deleteStarted = cpu();
  for (const fileId of fileIds.slice(0, DELETED_FILES)) await index.deleteByFile(collectionId, fileId);
  result.deleteCpuUs = (cpu() - deleteStarted) / (unitsBefore - ((await index.countUnits(collectionId)) as number));
  await index.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return result;
}

async function main(): Promise<void> {
  if (process.env.INDEX_WRITES_ROOT) {
    console.log(JSON.stringify(await run(process.env.INDEX_WRITES_ROOT)));
    return;
  }
  const before = process.env.BENCH_BEFORE_ROOT;
  const builds = [...(before ? [{ name: 'before', root: before }] : []), { name: 'this build', root: ROOT }];
  const results = new Map<string, Result[]>();
  for (let round = 0; round < (before ? 2 : 1); round++) {
    for (const { name, root } of builds) {
      const child = spawnSync(process.execPath, ['--no-node-snapshot', '-r', './scripts/swc-register.js', __filename], {
        cwd: ROOT,
        env: { ...process.env, INDEX_WRITES_ROOT: root },
        encoding: 'utf8',
      });
      if (child.status !== 0) throw new Error(`${name}: ${child.stderr}`);
      const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Result;
      results.set(name, [...(results.get(name) ?? []), result]);
      console.log(
        `${name}: ${result.cpuUs.toFixed(1)} µs of CPU a unit, written ${result.writtenKb.toFixed(2)} KB and read ${result.readKb.toFixed(2)} KB a unit, ` +
          `file ${result.fileMb.toFixed(0)} MB; shares read back ${result.shareReadCpuUs.toFixed(2)} µs a row; deletes ${result.deleteCpuUs.toFixed(1)} µs a unit; load ${load()}`,
      );
    }
  }
  const mean = (list: Result[], key: keyof Result) => list.reduce((sum, r) => sum + r[key], 0) / list.length;
  const mine = results.get('this build')!;
  const theirs = results.get('before');
  const figure = figures('index-writes', `${UNITS.toLocaleString('en')} units of 512 dimensions, the second half measured`);
  figure('cpu_per_unit', mean(mine, 'cpuUs'), 'µs', theirs ? mean(theirs, 'cpuUs') : null, 'lower is better (baseline: BENCH_BEFORE_ROOT)');
  figure('written_per_unit', mean(mine, 'writtenKb'), 'KB', theirs ? mean(theirs, 'writtenKb') : null, 'syscall bytes, WAL and checkpoint');
  figure('file_size', mean(mine, 'fileMb'), 'MB', theirs ? mean(theirs, 'fileMb') : null, 'the store after the writes');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
