import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { CollectionsFacade } from 'workflow-collection-service/sdk';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import search, { SearchCollectionParameters } from './index';

describe('search-collection node', () => {
  it('searches with its parameters and outputs the passages', async () => {
    const asked: unknown[] = [];
    const collections = {
      search: async (collectionId: string, query: unknown) => {
        asked.push({ collectionId, query });
        return {
          items: [{ id: 'psg_1', content: 'Rise for two hours.', distance: 0.12, fileId: 'fle_1', fileName: 'bread.pdf', page: 3 }],
        };
      },
    } as unknown as CollectionsFacade;
    const params = plainToInstance(SearchCollectionParameters, { collectionId: 'col_1', query: 'how long?', topK: '3', mode: 'hybrid' });
    const output = await search.execute(inputContext(params, { collections }));
    expect(asked).toEqual([{ collectionId: 'col_1', query: { text: 'how long?', topK: 3, offset: 0, mode: 'hybrid' } }]);
    expect(output).toEqual([expect.objectContaining({ id: 'psg_1', distance: 0.12, page: 3 })]);
  });

  it.each([
    [{ collectionId: 'col_1', query: 'q' }, []],
    [{ collectionId: 'col_1', query: '' }, ['query']],
    [{ collectionId: 'col_1', query: 'q', topK: 0 }, ['topK']],
    [{ collectionId: 'col_1', query: 'q', topK: 101 }, ['topK']],
    [{ collectionId: 'col_1', query: 'q', mode: 'fuzzy' }, ['mode']],
    [{ query: 'q' }, ['collectionId']],
  ])('validates %j', (values, bad) => {
    expect(validateSync(plainToInstance(SearchCollectionParameters, values)).map((e) => e.property)).toEqual(bad);
  });
});
