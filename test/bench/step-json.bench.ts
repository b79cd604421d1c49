/**
 * Issue 27: a step's recorded input and output serialised once (the executor's size check) rather
 * than again when the SQLite run store writes the row. CPU per step of the executor's recording
 * (`recordedJson` on the input and the output, the record carrying their texts; `recordable` in a
 * build before it), the step recorder and the store's upsert, in batches
 * of five (a branching run writes five), for each build given: its dist/ is loaded, so the builds
 * compare alike. The builds' rounds alternate in one process, so the machine's load falls on each
 * alike. The values are an HTTP answer's size (about 2 kB of JSON each). BENCH_ONLY=before|after
 * runs one build alone: under `valgrind --tool=callgrind` at two BENCH_ROUNDS, the difference of
 * the instruction counts divided by the steps between them is a figure the machine's load does not move.
 *
 *   npm run -s build && BENCH_BEFORE_ROOT=/work/base \
 *     node --no-node-snapshot -r ./scripts/swc-register.js test/bench/step-json.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Run } from '../../src/domain/run.model';
import type { StepRecord } from '../../src/domain/step.model';
import type { RunStore } from '../../src/domain/run-store.port';
import type { Recorded } from '../../src/engine/executor/step-records';
import { figures, ownCpuMicros } from './lib/bench-kit';

const BATCH = 5;
const BATCHES = Number(process.env.BENCH_BATCHES ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);

interface Recorder {
  add(step: StepRecord): void;
  flush(): Promise<void>;
}

/** A value the size of an HTTP answer: a fresh object each time, as a node's output is. */
const answer = (i: number) => ({
  status: 200,
  items: Array.from({ length: 20 }, (_, j) => ({ id: `item_${i}_${j}`, title: `Title ${j} of ${i}`, score: j / 7, tags: ['a', 'b'] })),
});

async function build(root: string) {
  const load = <T>(path: string): T => require(join(root, 'dist', 'src', path)) as T;
  const { openSqliteDatabase } = load<typeof import('../../src/storage/embedded/sqlite-database')>('storage/embedded/sqlite-database');
  const { SqliteRunStore } = load<typeof import('../../src/storage/embedded/sqlite-run-store.adapter')>(
    'storage/embedded/sqlite-run-store.adapter',
  );
  const { newQueuedRun } = load<typeof import('../../src/domain/run.model')>('domain/run.model');
  const { StepRecorder } = load<typeof import('../../src/runs/step-recorder')>('runs/step-recorder');
  const records = load<Partial<typeof import('../../src/engine/executor/step-records')>>('engine/executor/step-records');
  const recorded = (value: unknown): Recorded =>
    records.recordedJson ? records.recordedJson(value) : { value: records.recordable!(value) };
  const dir = mkdtempSync(join(tmpdir(), 'step-json-'));
  const db = openSqliteDatabase(dir);
  const store = new SqliteRunStore(db) as RunStore;
  const run: Run = newQueuedRun({
    workflowId: 'wfl_bench',
    runType: 'test',
    versionId: null,
    version: null,
    definition: null,
    input: null,
    trigger: 'webhook',
    startedBy: 'u',
    actingUserId: 'u',
    idempotencyKey: null,
  });
  await store.create(run, new Date(0));
  await store.claim(run.id, 'w1', new Date(Date.now() + 3_600_000), new Date());
  const recorder: Recorder = new StepRecorder(
    store,
    run.id,
    'w1',
    () => undefined,
    () => null,
  );
  let n = 0;
  const round = async () => {
    for (let b = 0; b < BATCHES; b++) {
      for (let s = 0; s < BATCH; s++) {
        const startedAt = new Date();
        const input = recorded(answer(n));
        const output = recorded(answer(n + 1));
        recorder.add({
          nodeId: `n${s}`,
          position: s,
          type: 'set',
          version: 1,
          status: 'succeeded',
          attempts: 1,
          startedAt,
          finishedAt: startedAt,
          input: input.value,
          output: output.value,
          error: null,
          ...(input.json || output.json ? { json: { input: input.json, output: output.json } } : {}),
        });
        n++;
      }
      await recorder.flush();
    }
  };
  return {
    round,
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const cpuMicros = ownCpuMicros;

async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY;
  const roots = (
    [
      ...(process.env.BENCH_BEFORE_ROOT ? [['before', process.env.BENCH_BEFORE_ROOT] as [string, string]] : []),
      ['after', join(__dirname, '..', '..')],
    ] as [string, string][]
  ).filter(([name]) => !only || name === only);
  const builds = await Promise.all(roots.map(async ([name, root]) => ({ name, ...(await build(root)), spent: 0 })));
  for (const b of builds) await b.round();
  const load = loadavg()[0];
  for (let r = 0; r < ROUNDS; r++) {
    for (const b of builds) {
      const before = cpuMicros();
      await b.round();
      b.spent += cpuMicros() - before;
    }
  }
  for (const b of builds) b.close();
  const steps = ROUNDS * BATCHES * BATCH;
  const report = figures('step-json', `${steps} steps each, ${BATCH} a write, load ${load.toFixed(1)}-${loadavg()[0].toFixed(1)}`);
  const before = builds.find((b) => b.name === 'before');
  for (const b of builds) {
    report(`${b.name}_us_per_step`, b.spent / steps, 'us', b === before || !before ? null : before.spent / steps, 'informational');
  }
}

void main();
