// Preload (`node -r`) that counts the commits of a process: better-sqlite3 transactions begun while
// none is open (a nested one is a savepoint). On SIGUSR2 it writes `<pid> <count>` to the file
// COMMITS_OUT names (replacing what is there), and again at exit. Used by commits.bench.ts.
const Module = require('node:module');
const { writeFileSync } = require('node:fs');

let commits = 0;
let wrapped = false;
const load = Module._load;
Module._load = function (request) {
  const loaded = load.apply(this, arguments);
  if (!wrapped && request === 'better-sqlite3') {
    wrapped = true;
    const transaction = loaded.prototype.transaction;
    loaded.prototype.transaction = function (fn) {
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
  }
  return loaded;
};

const write = () => wrapped && process.env.COMMITS_OUT && writeFileSync(process.env.COMMITS_OUT, `${process.pid} ${commits}\n`);
process.on('SIGUSR2', write);
process.on('exit', write);
