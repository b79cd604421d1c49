// For the counting preloads (count-commits.js, count-statements.js): calls `patch` with
// better-sqlite3's Database class the first time the process loads it, before anything uses it.
const Module = require('node:module');

exports.onBetterSqlite3 = (patch) => {
  let patched = false;
  const load = Module._load;
  Module._load = function (request) {
    const loaded = load.apply(this, arguments);
    if (!patched && request === 'better-sqlite3') {
      patched = true;
      patch(loaded);
    }
    return loaded;
  };
  return () => patched;
};
