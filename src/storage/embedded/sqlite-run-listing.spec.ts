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
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    const spy = jest.spyOn(db, 'prepare').mockImplementation((sql: string) => {
      prepared.push(sql);
      return prepare(sql);
    });
    await runs.list(filter, { offset: 0, limit: 1 });
    spy.mockRestore();
    const params = [filter.visibleTo, filter.workflowId, filter.status].filter((p) => p !== undefined);
    return prepared.map((sql) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params, ...(sql.includes('LIMIT') ? [1, 0] : [])) as { detail: string }[])
        .map((step) => step.detail)
        .join('; '),
    );
  }

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
});
