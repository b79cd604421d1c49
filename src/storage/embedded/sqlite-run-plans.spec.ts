import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteDatabase, SqliteDb } from './sqlite-database';
import { prepareRunStatements } from './sqlite-run-statements';

/**
 * How SQLite reads the run store's statements (sqlite-run-statements.ts), put to EXPLAIN QUERY PLAN.
 * Every index on workflow_runs is written by each run it holds, so the indexes are few and most hold
 * runs in one status only; these plans check that each statement still finds its runs through one.
 */
describe('SqliteRunStore statement plans', () => {
  let dir: string;
  let db: SqliteDb;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-run-plans-'));
    db = openSqliteDatabase(dir);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The plan of `sql`, every parameter bound to NULL (a value does not change these plans). */
  function planOf(sql: string): string[] {
    const named = [...new Set([...sql.matchAll(/@(\w+)/g)].map((match) => match[1]))];
    const positional = (sql.replace(/'[^']*'/g, '').match(/\?/g) ?? []).length;
    const params: unknown[] = [
      ...(named.length > 0 ? [Object.fromEntries(named.map((name) => [name, null]))] : []),
      ...Array.from({ length: positional }, () => null),
    ];
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((step) => step.detail);
  }

  const statementsOnRuns = () =>
    Object.entries(prepareRunStatements(db))
      .map(([name, statement]) => [name, statement.source] as const)
      .filter(([, sql]) => sql.includes('workflow_runs'));

  it('reads no statement of the store off a scan of the whole runs table', () => {
    const statements = statementsOnRuns();
    expect(statements.length).toBeGreaterThan(30);
    for (const [name, sql] of statements) {
      expect({ name, plan: planOf(sql).filter((step) => /^SCAN workflow_runs$/.test(step)) }).toEqual({ name, plan: [] });
    }
  });

  it('reads the queue, the waiting and running runs and the finished ones off partial indexes of each', () => {
    const plans = Object.fromEntries(statementsOnRuns().map(([name, sql]) => [name, planOf(sql).join('; ')]));
    for (const name of ['listQueued', 'queuedCount', 'queuedOldest']) expect(plans[name]).toMatch(/INDEX workflow_runs_queue\b/);
    expect(plans.queuedPerUserMax).toMatch(/INDEX workflow_runs_queued_by_user\b/);
    expect(plans.listDueWaiting).toMatch(/INDEX workflow_runs_waiting\b/);
    expect(plans.listExpired).toMatch(/INDEX workflow_runs_running\b/);
    for (const name of ['finishedBefore', 'crowded']) expect(plans[name]).toMatch(/INDEX workflow_runs_finished\b/);
  });

  it("has no index of every run by status alone, which each of a run's three statuses would write twice", () => {
    const indexes = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'workflow_runs'`).all() as {
      name: string;
      sql: string | null;
    }[];
    const ofEveryRunByStatus = indexes.filter(({ sql }) => sql !== null && /\(status\b/.test(sql) && !/\bWHERE\b/.test(sql));
    expect(ofEveryRunByStatus).toEqual([]);
  });
});
