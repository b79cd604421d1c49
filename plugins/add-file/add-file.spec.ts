import { CollectionsFacade } from 'workflow-collection-service/sdk';
import { itemContext } from 'workflow-collection-service/sdk/testing';
import addFile, { AddFileParameters } from './index';

describe('add-file node', () => {
  it('adds the file as the run user and outputs the pending file', async () => {
    const added: unknown[] = [];
    const collections = {
      addFile: async (collectionId: string, file: unknown) => {
        added.push({ collectionId, file });
        return { id: 'fle_1', name: 'a.pdf', type: 'application/pdf', size: 0, status: 'pending', createdAt: '2026-01-01T00:00:00.000Z' };
      },
    } as unknown as CollectionsFacade;
    const params = Object.assign(new AddFileParameters(), { collectionId: 'col_1', name: 'a.pdf', url: 'https://example.com/a.pdf' });
    expect(await addFile.execute(itemContext(params, { collections }))).toMatchObject({ id: 'fle_1', status: 'pending' });
    expect(added).toEqual([{ collectionId: 'col_1', file: { name: 'a.pdf', url: 'https://example.com/a.pdf' } }]);
    expect(addFile.idempotent).toBe(false);
  });
});
