import { randomBytes } from 'node:crypto';
import { accessSync, constants, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirectory } from './make-directory';
import { AppConfig, ConfigError } from './app-config';

const PROBE_PREFIX = '.write-check-';

/**
 * Refuses to boot on a DATA_DIR this process cannot write, with one message that says who the
 * process runs as and what to do, instead of an EACCES stack trace from whichever module touches
 * the folder first (typically a Docker volume created root-owned for an image that runs as `node`).
 * Looks at the folder and the entries directly in it (the SQLite files, the secrets key, blobs/).
 */
export function assertDataDirWritable(config: AppConfig): void {
  if (!config.usesDataDir) return;
  const dir = config.dataDir;
  let failing = dir;
  try {
    makeDirectory(dir);
    // Random, not the pid: containers sharing the volume all run as pid 1 and may boot at once.
    const probe = join(dir, `${PROBE_PREFIX}${randomBytes(6).toString('hex')}`);
    writeFileSync(probe, '', { flag: 'wx' });
    rmSync(probe);
    for (const entry of readdirSync(dir)) {
      if (entry.startsWith(PROBE_PREFIX)) continue;
      failing = join(dir, entry);
      try {
        accessSync(failing, constants.R_OK | constants.W_OK);
      } catch (error) {
        // Removed since the listing (another process's own file): nothing to check.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  } catch (error) {
    throw new ConfigError([unwritable(dir, failing, error)]);
  }
}

function unwritable(dir: string, path: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
  // No owner to change: a folder on its path cannot hold folders (under /proc, a file system gone).
  if (code === 'ENOENT') {
    return `DATA_DIR: ${dir} cannot be created (${(error as Error).message}): set DATA_DIR to a folder this process can create or write.`;
  }
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  const who = uid === undefined ? 'this process' : `user ${uid} (group ${gid})`;
  const owner = uid === undefined ? 'this user' : `${uid}:${gid}`;
  return (
    `DATA_DIR: ${path} is not writable by ${who}: ${code}. ` +
    `Give the folder and its files to that user (chown -R ${owner} ${dir}) or set DATA_DIR to a folder it can write. ` +
    'With Docker, mount a named volume on /data (the image creates it owned by the node user) or chown the host folder you mount there.'
  );
}
