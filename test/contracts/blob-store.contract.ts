import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FilesystemBlobStore } from '../../src/storage/embedded/filesystem-blob-store.adapter';
import { GridFsBlobStore } from '../../src/storage/mongo/gridfs-blob-store.adapter';
import { BlobStore } from '../../src/domain/blob-store.port';
import { storeBackends } from '../utils/store-backends';

/**
 * The promises of the BlobStore port. The filesystem adapter backs the SQLite deployment and
 * GridFS the MongoDB one, so each backend of `storeBackends` names the blob adapter it pairs with.
 */
describe.each(storeBackends)('BlobStore contract: $name', (backend) => {
  let handles: Awaited<ReturnType<typeof backend.open>>;
  let root: string;
  let blobs: BlobStore;
  let folder: string;

  beforeAll(async () => {
    handles = await backend.open();
    root = mkdtempSync(join(tmpdir(), 'blob-store-'));
    blobs = handles.mongo ? new GridFsBlobStore(handles.mongo) : new FilesystemBlobStore(root);
  });
  afterAll(async () => {
    await handles.close();
    rmSync(root, { recursive: true, force: true });
  });
  beforeEach(() => {
    folder = `files/col_${randomBytes(6).toString('hex')}`;
  });

  it('gives back exactly the bytes it was given, binary included', async () => {
    const bytes = randomBytes(300_000);
    await blobs.put(`${folder}/fle_a`, bytes);
    const read = await blobs.get(`${folder}/fle_a`);
    expect(read).not.toBeNull();
    expect(read!.equals(bytes)).toBe(true);
  });

  it('keeps an empty blob apart from a missing one', async () => {
    await blobs.put(`${folder}/empty`, Buffer.alloc(0));
    expect((await blobs.get(`${folder}/empty`))!.length).toBe(0);
    await expect(blobs.get(`${folder}/missing`)).resolves.toBeNull();
  });

  it('replaces a blob put twice under one key', async () => {
    await blobs.put(`${folder}/fle_b`, Buffer.from('first version'));
    await blobs.put(`${folder}/fle_b`, Buffer.from('second'));
    expect((await blobs.get(`${folder}/fle_b`))!.toString()).toBe('second');
  });

  it('deletes one blob, and deleting a missing one is no error', async () => {
    await blobs.put(`${folder}/fle_c`, Buffer.from('c'));
    await blobs.put(`${folder}/fle_d`, Buffer.from('d'));
    await blobs.delete(`${folder}/fle_c`);
    await blobs.delete(`${folder}/fle_c`);
    await expect(blobs.get(`${folder}/fle_c`)).resolves.toBeNull();
    expect((await blobs.get(`${folder}/fle_d`))!.toString()).toBe('d');
  });

  it('deletes a folder and nothing beside it, not even a key sharing its prefix', async () => {
    await blobs.put(`${folder}/fle_e`, Buffer.from('e'));
    await blobs.put(`${folder}/fle_f`, Buffer.from('f'));
    await blobs.put(`${folder}x/fle_g`, Buffer.from('g'));
    await blobs.deleteFolder(folder);
    await expect(blobs.get(`${folder}/fle_e`)).resolves.toBeNull();
    await expect(blobs.get(`${folder}/fle_f`)).resolves.toBeNull();
    expect((await blobs.get(`${folder}x/fle_g`))!.toString()).toBe('g');
    await blobs.deleteFolder(`${folder}/never-created`);
  });

  it.each(['../escape', '/absolute', 'a//b', 'a/../b', 'a/./b', '', 'spaces are odd'])('refuses the key %j', async (key) => {
    await expect(blobs.put(key, Buffer.from('x'))).rejects.toThrow(/Invalid blob key/);
    await expect(blobs.get(key)).rejects.toThrow(/Invalid blob key/);
  });

  if (!backend.name.includes('mongo')) {
    it('leaves no temporary file behind', async () => {
      await blobs.put(`${folder}/fle_h`, Buffer.from('h'));
      expect(readdirSync(join(root, ...folder.split('/')))).toEqual(['fle_h']);
    });
  }
});
