import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/app-config';
import { StorageConnections } from './storage-connections';

describe('StorageConnections: WAL checkpoints', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'wcs-storage-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const threshold = async (env: Record<string, string>, supervisedWorkers = 0): Promise<number> => {
    const config = loadConfig({ DATA_DIR: dataDir, ...env });
    config.superviseWorkers(supervisedWorkers);
    const connections = new StorageConnections(config);
    try {
      return connections.sqlite.pragma('wal_autocheckpoint', { simple: true }) as number;
    } finally {
      await connections.onApplicationShutdown();
    }
  };

  it('leaves them to the worker processes in a process that supervises some, keeping a backstop', async () => {
    expect(await threshold({ APP_ROLE: 'all' }, 1)).toBe(10_000);
  });

  it('leaves them to the workers in a process that only serves the API', async () => {
    expect(await threshold({ APP_ROLE: 'api' })).toBe(10_000);
  });

  it('checkpoints in a thread of its own in a process that writes the store itself, alone or as a worker', async () => {
    expect(await threshold({ APP_ROLE: 'all' })).toBe(10_000);
    expect(await threshold({ APP_ROLE: 'worker' })).toBe(10_000);
  });
});

describe('StorageConnections: a store that cannot be opened', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'wcs-storage-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('fails every store that asks with the first failure, without opening it again (each open may wait 30 s)', async () => {
    const file = join(dataDir, 'service.db');
    writeFileSync(file, 'not a database, but long enough to have a header of sorts: '.repeat(20));
    const connections = new StorageConnections(loadConfig({ DATA_DIR: dataDir }));
    let first: unknown;
    try {
      void connections.sqlite;
    } catch (error) {
      first = error;
    }
    expect(first).toMatchObject({ code: 'SQLITE_NOTADB' });
    // A database could be opened now, but the stores after the first hear the same failure: the process is failing its boot.
    rmSync(file);
    expect(() => connections.sqlite).toThrow(first as Error);
    await connections.onApplicationShutdown();
  });
});
