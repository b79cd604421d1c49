import { execFileSync } from 'node:child_process';
import { workerFile } from '../common/worker-path';

describe('SearchIndexModule', () => {
  it("does not load the Elasticsearch client into a process of the embedded default (the compiled module's requires)", () => {
    const loaded = execFileSync(
      process.execPath,
      [
        '-e',
        `require('reflect-metadata'); require(process.argv[1]);
         process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((path) => path.includes('@elastic'))));`,
        workerFile(__dirname, 'search-index.module'),
      ],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(loaded)).toEqual([]);
  }, 60_000);
});
