// Preload (`node -r`) that counts the commits of a process: better-sqlite3 transactions begun while
// none is open (a nested one is a savepoint). On SIGUSR2 it writes `<pid> <count>` to the file
// COMMITS_OUT names (replacing what is there), and again at exit. Used by commits.bench.ts.
const { writeFileSync } = require('node:fs');
const { onBetterSqlite3 } = require('./on-better-sqlite3');

let commits = 0;
const wrapped = onBetterSqlite3((Database) => {
  const transaction = Database.prototype.transaction;
  Database.prototype.transaction = function (fn) {
    const open = () => this.inTransaction;
    const made = transaction.call(this, fn);
    const counted = (run) =>
      function (...args) {
        if (!open()) commits++;
        return run.apply(this, args);
      };
    const outer = counted(made);
    for (const kind of ['deferred', 'immediate', 'exclusive']) outer[kind] = counted(made[kind]);
    outer.default = outer;
    return outer;
  };
});

const write = () => wrapped() && process.env.COMMITS_OUT && writeFileSync(process.env.COMMITS_OUT, `${process.pid} ${commits}\n`);
process.on('SIGUSR2', write);
process.on('exit', write);
