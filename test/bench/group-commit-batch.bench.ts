/**
 * Issue 27 (2): what a batch of the group commit costs in the store, in one process, with none of
 * the service around it: BATCHES batches of RUNS runs accepted in one turn (each run's write and
 * its job's write, 2 x RUNS writes of a few rows a batch, as the accept path writes on the embedded
 * queue), on the built dist/ of this tree and, with BENCH_BEFORE_ROOT=<dir>, of an earlier build,
 * their rounds alternating. Prints CPU per batch (us, noisy under load) for each.
 *
 * Instructions, which the load does not move: run it under callgrind once with BENCH_BATCHES=0 and
 * once with BENCH_BATCHES=N (BENCH_ROUNDS=1, BENCH_WARM=0, BENCH_BEFORE_ROOT unset, BENCH_ROOT=<dir>
 * for the build to count); (Ir(N) - Ir(0)) / N is one batch's instructions, start-up left out:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/x.out node --no-node-snapshot --jitless \
 *     -r ./scripts/swc-register.js test/bench/group-commit-batch.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { figures, median, ownCpuMicros } from './lib/bench-kit';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 400);
const RUNS = Number(process.env.BENCH_RUNS ?? 25);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARM = Number(process.env.BENCH_WARM ?? 1);
const ROOT = resolve(process.env.BENCH_ROOT ?? join(__dirname, '..', '..'));
const BEFORE_ROOT = process.env.BENCH_BEFORE_ROOT;

/** One build's stores on a fresh database: `batch()` accepts RUNS runs in one turn and waits for their commit. */
function storesOf(root: string) {
  const load = <T>(path: string) => require(join(root, 'dist', 'src', path)) as T;
  const { openSqliteDatabase } = load<typeof import('../../src/storage/embedded/sqlite-database')>('storage/embedded/sqlite-database');
  const { SqliteRunStore } = load<typeof import('../../src/storage/embedded/sqlite-run-store.adapter')>(
    'storage/embedded/sqlite-run-store.adapter',
  );
  const { SqliteJobStore } = load<typeof import('../../src/jobs/embedded/sqlite-job-store.adapter')>(
    'jobs/embedded/sqlite-job-store.adapter',
  );
  const { newQueuedRun } = load<typeof import('../../src/domain/run.model')>('domain/run.model');
  const dir = mkdtempSync(join(tmpdir(), 'group-commit-batch-'));
  const db = openSqliteDatabase(dir);
  const runs = new SqliteRunStore(db);
  const jobs = new SqliteJobStore(db);
  let n = 0;
  const batch = async () => {
    const now = new Date();
    await Promise.all(
      Array.from({ length: RUNS }, async () => {
        const run = newQueuedRun({
          workflowId: 'wf_1',
          runType: 'production',
          versionId: 'v1',
          version: 1,
          definition: null,
          input: { query: 'what is a vector' },
          trigger: 'webhook',
          startedBy: 'usr_1',
          actingUserId: 'usr_1',
          idempotencyKey: null,
        });
        await Promise.all([
          runs.create(run, now),
          jobs.insert(
            { name: 'run', id: `job_${n++}`, data: JSON.stringify({ runId: run.id }), maxAttempts: 3, backoffMs: 1000, runAt: now },
            now,
          ),
        ]);
      }),
    );
  };
  const close = () => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { batch, close, clear: () => db.exec('DELETE FROM jobs; DELETE FROM workflow_runs;') };
}

async function main(): Promise<void> {
  const builds = [...(BEFORE_ROOT ? [['before', resolve(BEFORE_ROOT)] as const] : []), ['this', ROOT] as const].map(([label, root]) => ({
    label,
    stores: storesOf(root),
    spent: [] as number[],
  }));
  const round = async (build: (typeof builds)[number]) => {
    const before = ownCpuMicros();
    for (let i = 0; i < BATCHES; i++) await build.stores.batch();
    const spent = BATCHES ? (ownCpuMicros() - before) / BATCHES : 0;
    build.stores.clear();
    return spent;
  };
  for (let w = 0; w < WARM; w++) for (const build of builds) await round(build);
  const load = loadavg()[0];
  for (let r = 0; r < ROUNDS; r++) for (const build of r % 2 ? [...builds].reverse() : builds) build.spent.push(await round(build));
  for (const build of builds) build.stores.close();
  const report = figures(
    'group-commit-batch',
    `${ROUNDS} rounds of ${BATCHES} batches of ${RUNS} runs (2 writes each), medians, load ${load.toFixed(1)}-${loadavg()[0].toFixed(1)}`,
  );
  const before = builds.find((build) => build.label === 'before');
  for (const build of builds) {
    report(`${build.label}_us_per_batch`, median(build.spent), 'us', build === before || !before ? null : median(before.spent), 'fewer');
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
