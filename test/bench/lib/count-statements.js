// Preload (`node -r`) that counts the SQLite statements a process executes, by their SQL: every
// run/get/all/iterate of a better-sqlite3 statement, each exec, and the savepoints and commits its
// transactions make (better-sqlite3 runs those as statements of its own, counted by their SQL too).
// On SIGUSR2 it writes the counts as JSON ([sql, count] pairs) to the file STATEMENTS_OUT names, or
// to `<pid>.json` in the directory BENCH_STATEMENTS_DIR names, there at exit too: the worker processes
// of `npm start` inherit the preload, so each process's statements are apart. Used by
// run-statements.bench.ts, fair-runs.bench.ts and backpressure.bench.ts (BENCH_DIAG=1). The counts do
// not move with the machine's load.
const { renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { onBetterSqlite3 } = require('./on-better-sqlite3');

const counts = new Map();
const count = (sql) => {
  const key = sql.replace(/\s+/g, ' ').trim().slice(0, 100);
  counts.set(key, (counts.get(key) ?? 0) + 1);
};
onBetterSqlite3((Database) => {
  const { prepare, exec } = Database.prototype;
  let statementsWrapped = false;
  Database.prototype.prepare = function (...args) {
    const statement = prepare.apply(this, args);
    if (!statementsWrapped) {
      statementsWrapped = true;
      const proto = Object.getPrototypeOf(statement);
      for (const method of ['run', 'get', 'all', 'iterate']) {
        const original = proto[method];
        proto[method] = function (...params) {
          count(this.source);
          return original.apply(this, params);
        };
      }
    }
    return statement;
  };
  Database.prototype.exec = function (sql) {
    count(sql);
    return exec.call(this, sql);
  };
});

// Written whole under another name and renamed into place: the bench polls the file, and a read
// between a large write's first and last bytes would find half the JSON.
const write = () => {
  const out =
    process.env.STATEMENTS_OUT ?? (process.env.BENCH_STATEMENTS_DIR && join(process.env.BENCH_STATEMENTS_DIR, `${process.pid}.json`));
  if (!out) return;
  writeFileSync(`${out}.part`, JSON.stringify([...counts]));
  renameSync(`${out}.part`, out);
};
process.on('SIGUSR2', write);
process.on('exit', () => process.env.BENCH_STATEMENTS_DIR && write());
