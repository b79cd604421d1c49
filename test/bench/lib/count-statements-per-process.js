// Preload (`node -r`) that counts the SQLite statements each process executes, by their SQL (as
// count-statements.js), and writes them as JSON ([sql, count] pairs) to `<pid>.json` in the directory
// BENCH_STATEMENTS_DIR names, on SIGUSR2 and at exit: the worker processes of `npm start` inherit it,
// so each process's statements are apart. Used by backpressure.bench.ts (BENCH_DIAG=1).
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { onBetterSqlite3 } = require('./on-better-sqlite3');

const counts = new Map();
const count = (sql) => {
  const key = sql.replace(/\s+/g, ' ').trim().slice(0, 90);
  counts.set(key, (counts.get(key) ?? 0) + 1);
};
onBetterSqlite3((Database) => {
  const { prepare, exec } = Database.prototype;
  let wrapped = false;
  Database.prototype.prepare = function (...args) {
    const statement = prepare.apply(this, args);
    if (!wrapped) {
      wrapped = true;
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

const write = () =>
  process.env.BENCH_STATEMENTS_DIR &&
  writeFileSync(join(process.env.BENCH_STATEMENTS_DIR, `${process.pid}.json`), JSON.stringify([...counts]));
process.on('SIGUSR2', write);
process.on('exit', write);
