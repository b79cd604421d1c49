/**
 * Issue 27 (2): what accepting a caller's run costs in the store, in one process: RunAdmission on
 * the SQLite run store and the embedded queue (no workers), CALLERS callers accepting RUNS runs a
 * round, and CPU per accept of four variants whose rounds alternate (so the machine's load falls on
 * each alike):
 * - `one_write`: the run and its job in one write of the group commit (JobQueue.stage), as the service does;
 * - `two_writes`: the run, then its job, each a write of its own (as on Bull or MongoDB);
 * - each `_journal_on_disk`: the same, with every write taken for one that may change many pages,
 *   so the savepoints' journal of the batch goes to a temporary file past 64 KiB (as every batch did before).
 *
 *   node --no-node-snapshot -r ./scripts/swc-register.js test/bench/accept-writes.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { AppConfig } from '../../src/config/app-config';
import type { WorkflowStore } from '../../src/domain/workflow-store.port';
import { EmbeddedJobQueue } from '../../src/jobs/embedded/embedded-job-queue.adapter';
import { SqliteJobStore } from '../../src/jobs/embedded/sqlite-job-store.adapter';
import { Metrics } from '../../src/metrics/metrics.service';
import { RunAdmission } from '../../src/runs/run-admission.service';
import { groupCommitOf } from '../../src/storage/embedded/group-commit';
import { openSqliteDatabase } from '../../src/storage/embedded/sqlite-database';
import { SqliteRunStore } from '../../src/storage/embedded/sqlite-run-store.adapter';
import { figures, median, ownCpuMicros } from './lib/bench-kit';
import { aQueuedRun } from '../utils/runs';

const CALLERS = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const VARIANTS = ['one_write', 'two_writes', 'one_write_journal_on_disk', 'two_writes_journal_on_disk'] as const;
type Variant = (typeof VARIANTS)[number];

const cpuMicros = ownCpuMicros;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'accept-writes-'));
  const db = openSqliteDatabase(dir);
  const group = groupCommitOf(db);
  const run = group.run.bind(group);
  let journalInMemory = true;
  group.run = <T>(work: () => T, few?: boolean) => run(work, journalInMemory && few);
  const logger = pino({ level: 'silent' });
  const queue = new EmbeddedJobQueue(new SqliteJobStore(db), { logger, concurrency: 4, leaseMs: 30_000 });
  const stage = queue.stage.bind(queue);
  let oneWrite = true;
  queue.stage = (name, data, options) => (oneWrite ? stage(name, data, options) : undefined);
  const limits = { RUNS_MAX_QUEUED: 0, RUNS_MAX_QUEUED_PER_WORKFLOW: 0, RUNS_MAX_QUEUED_PER_USER: 0, RUNS_ENQUEUE_TIMEOUT_MS: 5000 };
  const admission = new RunAdmission(
    new SqliteRunStore(db),
    {} as WorkflowStore,
    queue,
    logger,
    limits as unknown as AppConfig,
    new Metrics(),
  );

  const round = async (variant: Variant, workflowId: string): Promise<number> => {
    oneWrite = variant.startsWith('one_write');
    journalInMemory = !variant.endsWith('_journal_on_disk');
    let left = RUNS;
    const caller = async () => {
      while (left-- > 0) {
        const queued = aQueuedRun({
          workflowId,
          runType: 'production',
          versionId: 'v1',
          version: 1,
          input: { query: 'what is a vector' },
          startedBy: 'usr_1',
          actingUserId: 'usr_1',
        });
        await admission.accept(queued, 'caller', {});
      }
    };
    const before = cpuMicros();
    await Promise.all(Array.from({ length: CALLERS }, caller));
    const spent = (cpuMicros() - before) / RUNS;
    db.exec('DELETE FROM jobs; DELETE FROM workflow_runs;');
    return spent;
  };

  const spent = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
  for (const v of VARIANTS) await round(v, `wf_warm_${v}`);
  const load = loadavg()[0];
  for (let r = 0; r < ROUNDS; r++) {
    for (const v of r % 2 ? [...VARIANTS].reverse() : VARIANTS) spent[v].push(await round(v, `wf_${r}_${v}`));
  }
  await queue.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
  const where = `${ROUNDS} rounds of ${RUNS} accepts by ${CALLERS} callers, medians, load ${load.toFixed(1)}-${loadavg()[0].toFixed(1)}`;
  const report = figures('accept-writes', where);
  for (const v of VARIANTS) {
    report(`${v}_us_per_accept`, median(spent[v]), 'us', v === 'one_write' ? null : median(spent.one_write), 'informational');
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
