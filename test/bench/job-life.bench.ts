/**
 * Issue 27 (2): what one job's life costs the embedded queue's store (SqliteJobStore), in one
 * process, with nothing of the service around it. In steady state behind a backlog of BACKLOG
 * waiting jobs of USERS users, each turn of the group commit inserts a job (due now, with its fair
 * turn), claims the head job and completes the job claimed the turn before: LIVES such turns a
 * round, one commit each. On the built dist/ of this tree and, with BENCH_BEFORE_ROOT=<dir>, of an
 * earlier build, their rounds alternating. Prints CPU per job life (us, noisy under load) and the
 * WAL frames a life writes (pages: each B-tree of the table a commit changes is one at least; the
 * load does not move them) for each.
 *
 * Instructions, which the load does not move: run it under callgrind with BENCH_LIVES=N and 2N
 * (BENCH_ROUNDS=1, BENCH_WARM=0, BENCH_BEFORE_ROOT unset, BENCH_ROOT=<dir> for the build to count);
 * (Ir(2N) - Ir(N)) / N is one life's instructions, start-up and backlog left out:
 *
 *   BENCH_LIVES=500 valgrind --tool=callgrind --callgrind-out-file=/tmp/x.out node --no-node-snapshot \
 *     -r ./scripts/swc-register.js test/bench/job-life.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { figures, median, ownCpuMicros } from './lib/bench-kit';

const LIVES = Number(process.env.BENCH_LIVES ?? 2000);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 30);
const USERS = Number(process.env.BENCH_USERS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARM = Number(process.env.BENCH_WARM ?? 1);
const ROOT = resolve(process.env.BENCH_ROOT ?? join(__dirname, '..', '..'));
const BEFORE_ROOT = process.env.BENCH_BEFORE_ROOT;
const NAME = 'workflow.run';

/** One build's job store on a fresh database, its backlog queued: `round()` runs LIVES lives and returns the WAL frames they wrote. */
async function storeOf(root: string) {
  const load = <T>(path: string) => require(join(root, 'dist', 'src', path)) as T;
  const { openSqliteDatabase } = load<typeof import('../../src/storage/embedded/sqlite-database')>('storage/embedded/sqlite-database');
  const { SqliteJobStore } = load<typeof import('../../src/jobs/embedded/sqlite-job-store.adapter')>(
    'jobs/embedded/sqlite-job-store.adapter',
  );
  const dir = mkdtempSync(join(tmpdir(), 'job-life-'));
  const db = openSqliteDatabase(dir);
  // Frames are counted off the WAL, so it is copied back only between rounds.
  db.pragma('wal_autocheckpoint = 0');
  const store = new SqliteJobStore(db);
  let n = 0;
  const job = () => {
    const i = n++;
    return {
      name: NAME,
      id: `job_${i}`,
      data: JSON.stringify({ runId: `run_${i}` }),
      maxAttempts: 3,
      backoffMs: 1000,
      runAt: new Date(),
      share: { user: `usr_${i % USERS}`, flow: `wfl_${i % (USERS * 2)}` },
    };
  };
  for (let i = 0; i < BACKLOG; i++) await store.insert(job(), new Date());
  let held: { id: string; token: string } | undefined;
  const round = async (): Promise<number> => {
    db.pragma('wal_checkpoint(TRUNCATE)');
    for (let i = 0; i < LIVES; i++) {
      const now = new Date();
      const [, claimed] = await Promise.all([
        store.insert(job(), now),
        store.claimSome(NAME, now, new Date(now.getTime() + 30_000), [`token_${n}`]),
        held ? store.complete({ name: NAME, id: held.id }, held.token) : null,
      ]);
      held = claimed[0] ? { id: claimed[0].job.id, token: claimed[0].token } : undefined;
    }
    return (db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0].log;
  };
  const close = () => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { round, close };
}

async function main(): Promise<void> {
  const builds: { label: string; store: Awaited<ReturnType<typeof storeOf>>; spent: number[]; frames: number[] }[] = [];
  for (const [label, root] of [...(BEFORE_ROOT ? [['before', resolve(BEFORE_ROOT)] as const] : []), ['this', ROOT] as const])
    builds.push({ label, store: await storeOf(root), spent: [], frames: [] });
  const round = async (build: (typeof builds)[number]) => {
    const before = ownCpuMicros();
    const frames = await build.store.round();
    return { spent: LIVES ? (ownCpuMicros() - before) / LIVES : 0, frames: LIVES ? frames / LIVES : 0 };
  };
  for (let w = 0; w < WARM; w++) for (const build of builds) await round(build);
  const load = loadavg()[0];
  for (let r = 0; r < ROUNDS; r++)
    for (const build of r % 2 ? [...builds].reverse() : builds) {
      const { spent, frames } = await round(build);
      build.spent.push(spent);
      build.frames.push(frames);
    }
  for (const build of builds) build.store.close();
  const report = figures(
    'job-life',
    `${ROUNDS} rounds of ${LIVES} lives behind ${BACKLOG} waiting jobs of ${USERS} users, medians, load ${load.toFixed(1)}-${loadavg()[0].toFixed(1)}`,
  );
  const before = builds.find((build) => build.label === 'before');
  for (const build of builds) {
    const baseline = (of: number[] | undefined) => (build === before || !of ? null : median(of));
    report(`${build.label}_us_per_life`, median(build.spent), 'us', baseline(before?.spent), 'fewer');
    report(`${build.label}_wal_frames_per_life`, median(build.frames), 'frames', baseline(before?.frames), 'fewer');
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
