/**
 * Issue 27 (2): what the run store's writes of one run cost, and what parts of them would save.
 * The writes of a run's life (insert queued, claim, complete with two steps) as the group commit
 * batches them (BATCH runs a transaction), on a fresh embedded store per variant, in one process,
 * the variants' rounds alternating so that the machine's load falls on each alike. CPU per run of:
 * - `as is`: each write in a savepoint of the batch's transaction (what the group commit does);
 * - `no savepoints`: the same writes straight in the transaction (a batch that cannot undo one write alone);
 * - `no workflow status index`: as is, without workflow_runs_workflow_status (workflow_id, status, created_at);
 * - `no queued indexes`: as is, without the partial indexes of queued runs (the queue, per user).
 * The last two only say what those indexes cost: the admission counts, the listings and the pruner read them.
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/run-writes.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Run } from '../../src/domain/run.model';
import type { StepRecord } from '../../src/domain/step.model';
import { openSqliteDatabase, SqliteDb } from '../../src/storage/embedded/sqlite-database';
import { SqliteRunStore } from '../../src/storage/embedded/sqlite-run-store.adapter';
import { figures, ownCpuMicros } from './lib/bench-kit';
import { aQueuedRun } from '../utils/runs';

const BATCH = Number(process.env.BENCH_BATCH ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);

/** The synchronous writes the store hands to its group commit (private: reached here only to batch them two ways). */
interface Writes {
  insertRun(run: Run, reuseSince: Date): unknown;
  claimRun(id: string, owner: string, until: Date, now: Date): unknown;
  completeRun(
    id: string,
    owner: string,
    steps: StepRecord[],
    completion: { status: 'succeeded'; output: unknown; finishedAt: Date },
  ): unknown;
}

const step = (nodeId: string, position: number): StepRecord => ({
  nodeId,
  position,
  type: 'set',
  version: 1,
  status: 'succeeded',
  attempts: 1,
  startedAt: new Date(),
  finishedAt: new Date(),
  output: { answer: 42 },
  error: null,
});

function variant(dropIndexes: string[], savepoints: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'run-writes-'));
  const db: SqliteDb = openSqliteDatabase(dir);
  for (const index of dropIndexes) db.exec(`DROP INDEX ${index}`);
  db.prepare(
    `INSERT INTO workflows (id, name, owner_id, draft, latest_version, created_at, updated_at)
     VALUES ('wf_bench', 'bench', 'usr_bench', '{}', 0, '2026-01-01', '2026-01-01')`,
  ).run();
  const writes = new SqliteRunStore(db) as unknown as Writes;
  const alone = db.transaction((work: () => unknown) => work());
  const batch = db.transaction((works: (() => unknown)[]) => works.map((work) => (savepoints ? alone(work) : work())));
  const round = () => {
    const runs = Array.from({ length: BATCH }, () =>
      aQueuedRun({
        workflowId: 'wf_bench',
        runType: 'production',
        versionId: 'ver_bench',
        version: 1,
        input: { query: 'what is a vector' },
        startedBy: 'usr_bench',
        actingUserId: 'usr_bench',
      }),
    );
    const until = new Date(Date.now() + 60_000);
    batch.immediate(runs.map((run) => () => writes.insertRun(run, new Date(0))));
    batch.immediate(runs.map((run) => () => writes.claimRun(run.id, 'worker', until, new Date())));
    const steps = [step('trigger', 0), step('set', 1)];
    batch.immediate(
      runs.map(
        (run) => () => writes.completeRun(run.id, 'worker', steps, { status: 'succeeded', output: { answer: 42 }, finishedAt: new Date() }),
      ),
    );
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

function main(): void {
  const variants = {
    as_is: variant([], true),
    no_savepoints: variant([], false),
    no_workflow_status_index: variant(['workflow_runs_workflow_status'], true),
    no_queued_indexes: variant(['workflow_runs_queue', 'workflow_runs_queued_by_user'], true),
  };
  const spent = Object.fromEntries(Object.keys(variants).map((name) => [name, 0])) as Record<keyof typeof variants, number>;
  for (const v of Object.values(variants)) for (let i = 0; i < 5; i++) v.round();
  const load = loadavg()[0];
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, v] of Object.entries(variants) as [keyof typeof variants, { round: () => void }][]) {
      const before = cpuMicros();
      v.round();
      spent[name] += cpuMicros() - before;
    }
  }
  for (const v of Object.values(variants)) v.close();
  const where = `${ROUNDS * BATCH} runs each, ${BATCH} a transaction, load ${load.toFixed(1)}-${loadavg()[0].toFixed(1)}`;
  const report = figures('run-writes', where);
  const perRun = (name: keyof typeof variants) => spent[name] / (ROUNDS * BATCH);
  for (const name of Object.keys(variants) as (keyof typeof variants)[]) {
    report(`${name}_us_per_run`, perRun(name), 'us', name === 'as_is' ? null : perRun('as_is'), 'informational');
  }
}

main();
