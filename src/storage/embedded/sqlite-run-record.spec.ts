import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { succeededStep } from '../../../test/utils/steps';
import { openSqliteDatabase, SqliteDb } from './sqlite-database';
import { SqliteRunStore } from './sqlite-run-store.adapter';
import { aQueuedRun } from '../../../test/utils/runs';

/**
 * What a recording of steps (recordSteps, twice a branching run) costs the SQLite store: one
 * statement a step, the first step's write being the lease check. What it answers and writes is
 * the contract suite's (test/contracts/workflow-stores.contract.ts).
 */
describe('SqliteRunStore recordSteps statements', () => {
  let dir: string;
  let db: SqliteDb;
  let runs: SqliteRunStore;
  /** The SQL of the statements the store executed (run, get, all), transaction control apart. */
  let executed: string[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-run-record-'));
    db = openSqliteDatabase(dir);
    executed = [];
    const prepare = db.prepare.bind(db);
    jest.spyOn(db, 'prepare').mockImplementation((sql: string) => {
      const statement = prepare(sql);
      const methods = statement as unknown as Record<'run' | 'get' | 'all', (...args: unknown[]) => unknown>;
      for (const method of ['run', 'get', 'all'] as const) {
        const original = methods[method].bind(statement);
        methods[method] = (...args: unknown[]) => {
          executed.push(sql);
          return original(...args);
        };
      }
      return statement;
    });
    runs = new SqliteRunStore(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function claimedRun(): Promise<string> {
    const run = aQueuedRun({ workflowId: 'wfl_record', input: {} });
    await runs.create(run, new Date(0));
    await runs.claim(run.id, 'w1', new Date(Date.now() + 60_000), new Date());
    return run.id;
  }

  /** The statements one recordSteps executes. */
  async function statementsOf(record: () => Promise<unknown>): Promise<string[]> {
    executed = [];
    await record();
    return executed.filter((sql) => !/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(sql.trim()));
  }

  it('writes a batch of steps in one statement a step, without reading the run apart', async () => {
    const id = await claimedRun();
    const steps = [succeededStep('a', 0), succeededStep('b', 1), succeededStep('c', 2)];
    const sql = await statementsOf(() => runs.recordSteps(id, 'w1', steps));
    expect(sql).toHaveLength(3);
    expect(sql.some((text) => /SELECT lease_owner/.test(text))).toBe(false);
  });

  it('writes nothing for a worker whose lease is gone: the failed write, then the run read for its answer', async () => {
    const id = await claimedRun();
    const sql = await statementsOf(() => runs.recordSteps(id, 'intruder', [succeededStep('a', 0), succeededStep('b', 1)]));
    expect(sql).toHaveLength(2);
    expect(sql[1]).toMatch(/SELECT lease_owner/);
  });

  it('with a cancel asked for, reads the run after the write that changed nothing, and still writes every step', async () => {
    const id = await claimedRun();
    await runs.requestCancel(id, new Date());
    const sql = await statementsOf(() => runs.recordSteps(id, 'w1', [succeededStep('a', 0), succeededStep('b', 1)]));
    expect(sql).toHaveLength(4);
    expect(sql[1]).toMatch(/SELECT lease_owner/);
  });
});
