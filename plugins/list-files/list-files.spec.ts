import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { CollectionFile, CollectionsFacade, NodeConfigurationError } from 'workflow-collection-service/sdk';
import { itemContext } from 'workflow-collection-service/sdk/testing';
import listFiles, { ListFilesParameters, PAGE_SIZE } from './index';

const files: CollectionFile[] = Array.from({ length: 45 }, (_, i) => ({
  id: `fle_${String(i).padStart(2, '0')}`,
  collectionId: 'col_1',
  name: `file-${i}.txt`,
  type: 'text/plain',
  size: 100 + i,
  status: 'indexed',
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
}));

describe('list-files node', () => {
  const calls: Array<{ collectionId: string; offset: number; limit: number; status?: readonly string[] }> = [];
  /** One collection, `col_1`, that the acting user may read; any other is refused as the service would. */
  const collections: Pick<CollectionsFacade, 'listFiles' | 'getFileContent'> = {
    async listFiles(collectionId, { offset, limit, status }) {
      calls.push({ collectionId, offset, limit, ...(status ? { status } : {}) });
      if (collectionId !== 'col_1')
        throw new NodeConfigurationError(`collection ${collectionId} not found`, { details: { code: 'NOT_FOUND' } });
      const kept = status ? files.filter((f) => status.includes(f.status)) : files;
      return { items: kept.slice(offset, offset + limit), total: kept.length };
    },
    getFileContent: () => Promise.reject(new Error('not used')),
  };

  beforeEach(() => (calls.length = 0));

  function execute(params: Partial<ListFilesParameters>, item: unknown = null) {
    const ctx = itemContext(Object.assign(new ListFilesParameters(), params), { item, collections: collections as CollectionsFacade });
    return listFiles.execute(ctx) as Promise<CollectionFile[]>;
  }

  it('lists one page of 20 from the offset, as file objects', async () => {
    const page = await execute({ collectionId: 'col_1', offset: '20' });
    expect(calls).toEqual([{ collectionId: 'col_1', offset: 20, limit: PAGE_SIZE }]);
    expect(PAGE_SIZE).toBe(20);
    expect(page.map((f) => f.id)).toEqual(files.slice(20, 40).map((f) => f.id));
    expect(Object.keys(page[0]).sort()).toEqual(['collectionId', 'createdAt', 'id', 'name', 'size', 'status', 'type']);
  });

  it('starts at 0 by default and gives an empty page past the end', async () => {
    expect(await execute({ collectionId: 'col_1' })).toHaveLength(20);
    expect(calls[0].offset).toBe(0);
    expect(await execute({ collectionId: 'col_1', offset: '40' })).toHaveLength(5);
    expect(await execute({ collectionId: 'col_1', offset: '60' })).toEqual([]);
  });

  it('lists only the files in the statuses asked for', async () => {
    expect(await execute({ collectionId: 'col_1', status: ['error'] })).toEqual([]);
    expect(calls.at(-1)).toMatchObject({ status: ['error'] });
    expect(await execute({ collectionId: 'col_1', status: ['indexed'] })).toHaveLength(20);
    await execute({ collectionId: 'col_1' });
    expect(calls.at(-1)).not.toHaveProperty('status');
  });

  it('lets the failure of a collection the user cannot read through', async () => {
    await expect(execute({ collectionId: 'col_hidden' })).rejects.toBeInstanceOf(NodeConfigurationError);
  });

  it('runs once per item by default', () => {
    expect(listFiles.defaultRunMode).toBe('item');
  });

  it.each([
    [{ collectionId: 'col_1', offset: 40 }, []],
    [{ collectionId: 'col_1', offset: '-20' }, ['offset']],
    [{ collectionId: 'col_1', offset: '2.5' }, ['offset']],
    [{ collectionId: 'col_1', offset: 'page 2' }, ['offset']],
    [{ collectionId: '' }, ['collectionId']],
    [{ offset: '0' }, ['collectionId']],
    [{ collectionId: 'col_1', instructions: 42 }, ['instructions']],
    [{ collectionId: 'col_1', status: 'indexed' }, []],
    [{ collectionId: 'col_1', status: ['indexed', 'lost'] }, ['status']],
  ])('validates %j', (values, bad) => {
    const errors = validateSync(plainToInstance(ListFilesParameters, values));
    expect(errors.map((e) => e.property)).toEqual(bad);
  });
});
