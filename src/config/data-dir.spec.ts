import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './app-config';
import { assertDataDirWritable } from './data-dir';

/**
 * The refusal of a folder owned by someone else needs another user: test/e2e/docker-image.e2e-spec.ts
 * runs the built entry as one. Here, what any user can check.
 */
describe('assertDataDirWritable', () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'wcs-data-dir-'));
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('creates a missing DATA_DIR and leaves nothing behind', () => {
    const dir = join(root, 'nested', 'data');
    assertDataDirWritable(loadConfig({ DATA_DIR: dir }));
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a DATA_DIR that cannot be a folder, naming the variable and the fix', () => {
    const file = join(root, 'not-a-folder');
    writeFileSync(file, 'x');
    const error = captureError(() => assertDataDirWritable(loadConfig({ DATA_DIR: file })));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.stringMatching(
        new RegExp(`^DATA_DIR: ${file} is not writable by user \\d+ \\(group \\d+\\): EEXIST\\. .*chown -R \\d+:\\d+ ${file}`),
      ),
    ]);
  });

  it('refuses a DATA_DIR that cannot be created at once, naming the folder that could not be made (Node 20 hung under /proc)', () => {
    const error = captureError(() => assertDataDirWritable(loadConfig({ DATA_DIR: '/proc/wcs-no-such/data' })));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      "DATA_DIR: /proc/wcs-no-such/data cannot be created (ENOENT: no such file or directory, mkdir '/proc/wcs-no-such'): set DATA_DIR to a folder this process can create or write.",
    ]);
  });

  it("passes beside another process's probe, and many checks at once do not trip over each other", () => {
    const dir = join(root, 'shared');
    assertDataDirWritable(loadConfig({ DATA_DIR: dir }));
    // Left by a process that is checking the folder at this very moment.
    writeFileSync(join(dir, '.write-check-1'), '');
    const config = loadConfig({ DATA_DIR: dir });
    for (let i = 0; i < 20; i++) assertDataDirWritable(config);
    expect(readdirSync(dir)).toEqual(['.write-check-1']);
  });

  it('does not look at DATA_DIR when nothing is kept there', () => {
    const file = join(root, 'not-a-folder');
    writeFileSync(file, 'x');
    const config = loadConfig({
      DATA_DIR: file,
      MONGODB_URI: 'mongodb://127.0.0.1:1/none',
      ELASTICSEARCH_URL: 'http://127.0.0.1:1',
      SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    expect(() => assertDataDirWritable(config)).not.toThrow();
  });
});

function captureError(fn: () => void): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
