import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteDatabase, SqliteDb } from './sqlite-database';
import { SqliteRunStore } from './sqlite-run-store.adapter';
import { RunFilter } from '../../domain/run-store.port';

/**
 * How SQLite reads a listing of runs (GET /runs): the statements `list` prepares, as it prepares
 * them, put to EXPLAIN QUERY PLAN. A plan that reads more than the runs asked for costs more the
 * more runs the store holds, whichever workflow they are of.
 */
describe('SqliteRunStore listing plans', () => {
  let dir: string;
  let db: SqliteDb;
  let runs: SqliteRunStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-run-listing-'));
    db = openSqliteDatabase(dir);
    runs = new SqliteRunStore(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The query plans (one line per step) of the statements `list` prepares for `filter`. */
  async function plansOf(filter: RunFilter): Promise<string[]> {
    const prepared = await preparedBy(() => runs.list(filter, { offset: 0, limit: 1 }));
    // The status is written into the statement (see `list`), not bound.
    const params = [filter.visibleTo, filter.workflowId].filter((p) => p !== undefined);
    return prepared.map((sql) => planOf(sql, ...params, ...(sql.includes('LIMIT') ? [1, 0] : [])));
  }

  /** The statements `work` prepares. */
  async function preparedBy(work: () => Promise<unknown>): Promise<string[]> {
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    const spy = jest.spyOn(db, 'prepare').mockImplementation((sql: string) => {
      prepared.push(sql);
      return prepare(sql);
    });
    await work();
    spy.mockRestore();
    return prepared;
  }

  const planOf = (sql: string, ...params: unknown[]) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((step) => step.detail).join('; ');

  /** A step that reads every row of a table (`SCAN r`, not `SCAN r USING ... INDEX`). */
  const TABLE_SCAN = /(^|; )SCAN \w+(;|$)/;

  it("reads a workflow's runs of one status off an index of both, for the page and for the total", async () => {
    const plans = await plansOf({ workflowId: 'wfl_a', status: 'succeeded' });
    expect(plans).toHaveLength(2);
    for (const plan of plans) expect(plan).toMatch(/workflow_runs_workflow_status \(workflow_id=\? AND status=\?\)/);
  });

  it('does so for a member too, whose listing joins the memberships', async () => {
    const plans = await plansOf({ visibleTo: 'usr_a', workflowId: 'wfl_a', status: 'failed' });
    expect(plans).toHaveLength(2);
    for (const plan of plans) expect(plan).toMatch(/workflow_runs_workflow_status \(workflow_id=\? AND status=\?\)/);
  });

  // Each status's runs have a partial index of their own (the finished ones since migration 280): SQLite picks it for the
  // value bound to `status = ?`.
  it.each(['queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled'] as const)(
    'reads the runs of one status, %s, of every workflow off an index, for an admin and a member',
    async (status) => {
      for (const visibleTo of [undefined, 'usr_a']) {
        const plans = await plansOf({ status, ...(visibleTo ? { visibleTo } : {}) });
        expect(plans).toHaveLength(2);
        for (const plan of plans) expect(plan).not.toMatch(TABLE_SCAN);
      }
    },
  );

  it('reads the finished runs of one status off the index of finished runs', async () => {
    for (const plan of await plansOf({ status: 'failed' })) expect(plan).toMatch(/workflow_runs_finished \(status=\?\)/);
  });

  it("reads the waiting steps of an inbox from the waiting runs, an admin's and a member's", async () => {
    for (const visibleTo of [undefined, 'usr_a']) {
      const [sql] = await preparedBy(() => runs.listWaitingSteps({ type: 'approval', ...(visibleTo ? { visibleTo } : {}) }, 10));
      const plan = planOf(sql, { type: 'approval', limit: 10, ...(visibleTo ? { user: visibleTo } : {}) });
      expect(plan).not.toMatch(TABLE_SCAN);
      expect(plan).toMatch(/SEARCH s USING PRIMARY KEY \(run_id=\?\)/);
    }
  });

  it('refuses a status that is not one, since the status is written into the statement', async () => {
    await expect(runs.list({ status: "queued' OR 1=1 --" as never }, { offset: 0, limit: 1 })).rejects.toThrow('not a run status');
  });
});
