// Preload (`node -r`) that counts the commits of a process: better-sqlite3 transactions begun while
// none is open (a nested one is a savepoint), and apart those whose BEGIN found the write lock held
// by another process (SQLITE_BUSY: not a commit; the group commit asks again). Each process that
// loads it (the worker processes of `npm start` inherit it) writes `<pid> <commits> <busy>` to
// `<pid>.txt` in the directory COMMITS_OUT names, at once, on SIGUSR2 (replacing what is there) and
// at exit. Used by commit-count.ts (the commits and runs-cpu benches).
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { onBetterSqlite3 } = require('./on-better-sqlite3');

let commits = 0;
let busy = 0;
onBetterSqlite3((Database) => {
  const transaction = Database.prototype.transaction;
  Database.prototype.transaction = function (fn) {
    const open = () => this.inTransaction;
    const made = transaction.call(this, fn);
    const counted = (run) =>
      function (...args) {
        if (open()) return run.apply(this, args);
        commits++;
        try {
          return run.apply(this, args);
        } catch (error) {
          if (error?.code === 'SQLITE_BUSY') {
            commits--;
            busy++;
          }
          throw error;
        }
      };
    const outer = counted(made);
    for (const kind of ['deferred', 'immediate', 'exclusive']) outer[kind] = counted(made[kind]);
    outer.default = outer;
    return outer;
  };
});

const write = () =>
  process.env.COMMITS_OUT && writeFileSync(join(process.env.COMMITS_OUT, `${process.pid}.txt`), `${process.pid} ${commits} ${busy}\n`);
write();
process.on('SIGUSR2', write);
process.on('exit', write);
