/**
 * Issue 27 (2): what one recording of steps costs the SQLite run store (RunStore.recordSteps,
 * twice a branching run, three steps each), without HTTP or the worker around it: RUNS claimed
 * runs record three steps each, RECORDS times, 50 at once as the worker's slots do (their writes
 * share a group commit). CPU per recordSteps of this build's dist, and with BENCH_BEFORE_ROOT=<dir>
 * (an earlier build's dist/) that build's in the same process, rounds alternating: before/after
 * under the same load. BENCH_ONLY=before|after runs one build only, for an instruction count:
 *
 *   npm run -s build && node --no-node-snapshot -r ./scripts/swc-register.js test/bench/record-steps.bench.ts
 *   BENCH_ONLY=after valgrind --tool=callgrind node --no-node-snapshot -r ./scripts/swc-register.js test/bench/record-steps.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunStore } from '../../src/domain/run-store.port';
import type { SqliteDb } from '../../src/storage/embedded/sqlite-database';
import { median, report } from './lib/bench-kit';
import { succeededStep } from '../utils/steps';
import { aQueuedRun } from '../utils/runs';

const BENCH = 'record-steps';
const RUNS = 50;
const RECORDS = Number(process.env.BENCH_RECORDS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROOT = join(__dirname, '..', '..');

interface Subject {
  name: string;
  dir: string;
  db: SqliteDb;
  runs: RunStore;
  ids: string[];
  micros: number[];
}

async function subject(name: string, root: string): Promise<Subject> {
  const { openSqliteDatabase } = require(join(root, 'dist/src/storage/embedded/sqlite-database.js'));
  const { SqliteRunStore } = require(join(root, 'dist/src/storage/embedded/sqlite-run-store.adapter.js'));
  const dir = mkdtempSync(join(tmpdir(), 'record-steps-'));
  const db = openSqliteDatabase(dir) as SqliteDb;
  const runs = new SqliteRunStore(db) as RunStore;
  const ids: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = aQueuedRun({ workflowId: 'wfl_record', input: { query: 'what is a vector' } });
    await runs.create(run, new Date(0));
    await runs.claim(run.id, 'w1', new Date(Date.now() + 3_600_000), new Date());
    ids.push(run.id);
  }
  return { name, dir, db, runs, ids, micros: [] };
}

/** CPU (user + system, us) of RECORDS recordings of three steps by each run, 50 at once. */
async function round(s: Subject): Promise<number> {
  const steps = [succeededStep('trigger', 0, { query: 'what is a vector' }), succeededStep('if', 1, true), succeededStep('set', 2)];
  const start = process.cpuUsage();
  for (let i = 0; i < RECORDS; i++) await Promise.all(s.ids.map((id) => s.runs.recordSteps(id, 'w1', steps)));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (RECORDS * RUNS);
}

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY;
  const beforeRoot = process.env.BENCH_BEFORE_ROOT;
  const subjects: Subject[] = [];
  if (beforeRoot && only !== 'after') subjects.push(await subject('before', beforeRoot));
  if (only !== 'before') subjects.push(await subject('after', ROOT));
  try {
    for (const s of subjects) await round(s); // warm-up
    for (let r = 0; r < ROUNDS; r++) for (const s of subjects) s.micros.push(await round(s));
  } finally {
    for (const s of subjects) {
      s.db.close();
      rmSync(s.dir, { recursive: true, force: true });
    }
  }
  const before = subjects.find((s) => s.name === 'before');
  for (const s of subjects) {
    const value = median(s.micros);
    const baseline = s === before || !before ? null : median(before.micros);
    report({
      bench: BENCH,
      metric: `${s.name}_cpu_per_record`,
      value,
      unit: 'us',
      baseline,
      ratio: baseline ? value / baseline : null,
      target: `lower (load ${loadavg()[0].toFixed(2)})`,
    });
  }
}

void main();
