import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdir -p`: each missing folder of `dir`, from the first whose parent exists, so a failure is the
 * error of the folder that could not be made (ENOENT, EACCES, ENOTDIR). Not mkdirSync's own
 * `recursive`, which on Node 20 never returns for a path under /proc (`DATA_DIR=/proc/x` hung the
 * boot and the CLI). A folder another process makes meanwhile is taken as made.
 */
export function makeDirectory(dir: string): void {
  const folders = [resolve(dir)];
  for (let at = folders[0]; dirname(at) !== at && !existsSync(dirname(at)); at = dirname(at)) folders.push(dirname(at));
  for (const folder of folders.reverse()) {
    try {
      mkdirSync(folder);
    } catch (error) {
      // A file in its place is refused as mkdir -p refuses it (EEXIST).
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(folder).isDirectory()) throw error;
    }
  }
}
