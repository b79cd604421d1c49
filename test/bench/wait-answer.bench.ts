/**
 * Issue 27 (2), the `?wait` answer: what finishing a run and reading it for its waiter cost on the
 * embedded store, per run, two ways, on one fresh store, the ways' rounds alternating so that the
 * machine's load falls on each alike:
 * - `read after`: `complete`, then the waiter's `get` of the run and its steps after the commit
 *   (what a waiter in the process of the run's worker did before it was handed the run);
 * - `read in write`: `complete` with `read`, which answers with the run read in its own write.
 * Each run (the branching workflow's shape: four steps, three recorded before the end) is created,
 * claimed and its first steps recorded outside the measured span; BATCH runs end at once, as under
 * load (the group commit batches them). CPU per run is the process's own (user + system).
 * BENCH_ONLY=read-after|read-in-write runs that way alone, for instruction counts:
 *   valgrind --tool=callgrind node --no-node-snapshot -r ./scripts/swc-register.js test/bench/wait-answer.bench.ts
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/wait-answer.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Run } from '../../src/domain/run.model';
import type { StepRecord } from '../../src/domain/step.model';
import { openSqliteDatabase } from '../../src/storage/embedded/sqlite-database';
import { SqliteRunStore } from '../../src/storage/embedded/sqlite-run-store.adapter';
import { median, report } from './lib/bench-kit';
import { aQueuedRun } from '../utils/runs';

const BENCH = 'wait-answer';
const BATCH = Number(process.env.BENCH_BATCH ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const ONLY = process.env.BENCH_ONLY;
const WAYS = ['read-after', 'read-in-write'] as const;
type Way = (typeof WAYS)[number];

const INPUT = { query: 'what is a vector', collection: 'col_1' };
const definition = {
  nodes: ['trigger', 'if', 'set', 'http'].map((id) => ({ id, type: id, version: 1, parameters: { value: '{{ $input.query }}' } })),
  edges: [],
};
const step = (nodeId: string, position: number): StepRecord => ({
  nodeId,
  position,
  type: nodeId,
  version: 1,
  status: 'succeeded',
  attempts: 1,
  startedAt: new Date(),
  finishedAt: new Date(),
  input: INPUT,
  output: { ...INPUT, status: 200, body: { hello: 'world' } },
  error: null,
});

const queued = (): Run => aQueuedRun({ workflowId: 'wfl_wait', runType: 'production', definition: definition as never, input: INPUT });

/** BATCH runs claimed with three steps recorded, ready to end. */
async function ready(store: SqliteRunStore): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < BATCH; i++) {
    const run = queued();
    await store.create(run, new Date(0));
    await store.claim(run.id, 'w1', new Date(Date.now() + 60_000), new Date());
    await store.recordSteps(run.id, 'w1', [step('trigger', 0), step('if', 1), step('set', 2)]);
    ids.push(run.id);
  }
  return ids;
}

/** CPU (us) of ending the batch's runs and having each answer a waiter, `way`. */
async function end(store: SqliteRunStore, ids: string[], way: Way): Promise<number> {
  const read = way === 'read-in-write';
  const before = process.cpuUsage();
  const answers = await Promise.all(
    ids.map(async (id) => {
      const completion = { status: 'succeeded' as const, error: null, finishedAt: new Date(), output: { ok: true }, read };
      const completed = await store.complete(id, 'w1', [step('http', 3)], completion);
      return read ? completed : store.get(id);
    }),
  );
  const used = process.cpuUsage(before);
  if (answers.some((answer) => typeof answer !== 'object' || answer?.steps.length !== 4)) throw new Error(`${way}: a run was not answered`);
  return used.user + used.system;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wcs-wait-answer-'));
  const db = openSqliteDatabase(dir);
  const store = new SqliteRunStore(db);
  const ways = WAYS.filter((way) => !ONLY || way === ONLY);
  const cpu = new Map<Way, number[]>(ways.map((way) => [way, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const way of round % 2 ? [...ways].reverse() : ways) {
        const ids = await ready(store);
        cpu.get(way)!.push((await end(store, ids, way)) / BATCH);
      }
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const baseline = cpu.has('read-after') ? median(cpu.get('read-after')!) : null;
  for (const way of ways) {
    const value = median(cpu.get(way)!);
    report({
      bench: BENCH,
      metric: `${way}_cpu_per_run`,
      value,
      unit: 'us',
      baseline,
      ratio: baseline === null ? null : value / baseline,
      target: `less with the read in the write (load ${loadavg()[0].toFixed(1)})`,
    });
  }
}

void main();
