import { mkdtempSync, rmSync } from 'node:fs';
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
