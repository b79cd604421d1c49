import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDirectory } from './make-directory';

describe('makeDirectory', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'wcs-mkdir-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('makes every missing folder, and takes one that exists as made', () => {
    makeDirectory(join(root, 'a', 'b', 'c'));
    expect(existsSync(join(root, 'a', 'b', 'c'))).toBe(true);
    makeDirectory(join(root, 'a', 'b', 'c'));
    makeDirectory(root);
  });

  it('fails with the error of the folder it could not make', () => {
    writeFileSync(join(root, 'file'), '');
    expect(() => makeDirectory(join(root, 'file', 'sub'))).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
    expect(() => makeDirectory(join(root, 'file'))).toThrow(expect.objectContaining({ code: 'EEXIST' }));
  });

  it('fails under /proc, where mkdirSync with recursive never returns', () => {
    expect(() => makeDirectory('/proc/wcs-no-such/sub')).toThrow(expect.objectContaining({ code: 'ENOENT', path: '/proc/wcs-no-such' }));
  });
});
