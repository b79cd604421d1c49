import { Principal } from '../auth/principal';
import { AppError, ErrorCode } from '../common/app-error';
import { isNodeError, NodeConfigurationError, NodeUpstreamError } from '../sdk';
import { SearchService } from './search.service';
import { CollectionStore } from '../domain/collection-store.port';
import { CollectionsService } from './collections.service';
import { FilesService } from './files.service';
import { RunCollectionsProvider } from './run-collections.provider';

/** The files service as far as the provider uses it; its access checks have their own tests. */
function filesService(behaviour: { list?: () => Promise<unknown>; content?: () => Promise<unknown> }) {
  const principals: Principal[] = [];
  const service = {
    list: (principal: Principal) => (principals.push(principal), behaviour.list?.() ?? Promise.resolve({ items: [], total: 0 })),
    content: (principal: Principal) => (principals.push(principal), behaviour.content?.() ?? Promise.reject(new Error('unused'))),
  } as unknown as FilesService;
  return { service, principals };
}

const unusedSearch = {} as SearchService;
const unusedCollections = {} as CollectionsService;

/** The real collections service over a store that records what it is asked; the rest is unused by list(). */
function collectionsService(store: CollectionStore): CollectionsService {
  const unused = {} as never;
  return new CollectionsService(store, unused, unused, unused, unused);
}

describe('RunCollectionsProvider', () => {
  it('lists as the acting user, giving exactly the fields of a file object', async () => {
    const file = {
      id: 'fle_1',
      name: 'a.pdf',
      type: 'application/pdf',
      size: 10,
      status: 'error',
      createdAt: '2026-01-01T00:00:00.000Z',
      error: 'corrupt PDF',
    };
    const { service, principals } = filesService({ list: async () => ({ items: [file], total: 1 }) });
    const page = await new RunCollectionsProvider(unusedCollections, service, unusedSearch)
      .forUser('usr_7')
      .listFiles('col_1', { offset: 0, limit: 20 });
    expect(page).toEqual({
      items: [
        {
          id: 'fle_1',
          collectionId: 'col_1',
          name: 'a.pdf',
          type: 'application/pdf',
          size: 10,
          status: 'error',
          createdAt: '2026-01-01T00:00:00.000Z',
        },
      ],
      total: 1,
    });
    expect(principals).toEqual([{ userId: 'usr_7', keyId: null, isAdmin: false }]);
  });

  it('turns "no role" into a configuration error that says whose rights the run used', async () => {
    const { service } = filesService({ list: () => Promise.reject(AppError.notFound('collection', 'col_1')) });
    const error = await new RunCollectionsProvider(unusedCollections, service, unusedSearch)
      .forUser('usr_7')
      .listFiles('col_1', { offset: 0, limit: 20 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeConfigurationError);
    expect(error).toMatchObject({
      message:
        "collection col_1 not found (the run acts as user usr_7, who started it; listing a collection's files needs at least the viewer role)",
      details: { code: ErrorCode.NOT_FOUND, collectionId: 'col_1' },
    });
  });

  it('gives the status of a file without text', async () => {
    const { service } = filesService({
      content: () => Promise.reject(AppError.conflict('file fle_1 has no extracted text: its status is pending', { status: 'pending' })),
    });
    await expect(
      new RunCollectionsProvider(unusedCollections, service, unusedSearch).forUser('usr_7').getFileContent('col_1', 'fle_1'),
    ).rejects.toMatchObject({
      kind: 'configuration',
      details: { code: ErrorCode.CONFLICT, status: 'pending', collectionId: 'col_1', fileId: 'fle_1' },
    });
  });

  it('makes a store outage a retryable upstream error', async () => {
    for (const failure of [new AppError(ErrorCode.UNAVAILABLE, 'store is down'), new Error('SQLITE_BUSY')]) {
      const { service } = filesService({ list: () => Promise.reject(failure) });
      const error = await new RunCollectionsProvider(unusedCollections, service, unusedSearch)
        .forUser('usr_7')
        .listFiles('col_1', { offset: 0, limit: 20 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NodeUpstreamError);
      expect(isNodeError(error) && error.retryable).toBe(true);
    }
  });

  it('searches as the acting user and gives passages with a page, or null', async () => {
    const asked: unknown[] = [];
    const search = {
      search: async (principal: Principal, collectionId: string, query: unknown) => {
        asked.push({ principal, collectionId, query });
        return {
          result: [
            { id: 'psg_1', content: 'c', distance: 0.1, fileId: 'fle_1', fileName: 'a.pdf', chunkIndex: 0, page: 2 },
            { id: 'psg_2', content: 'd', distance: 0.2, fileId: 'fle_2', fileName: 'b.txt', chunkIndex: 0 },
          ],
        };
      },
    } as unknown as SearchService;
    const found = await new RunCollectionsProvider(unusedCollections, filesService({}).service, search)
      .forUser('usr_7')
      .search('col_1', { text: 'q', topK: 2, offset: 0, mode: 'hybrid' });
    expect(found.items).toEqual([
      { id: 'psg_1', content: 'c', distance: 0.1, fileId: 'fle_1', fileName: 'a.pdf', page: 2 },
      { id: 'psg_2', content: 'd', distance: 0.2, fileId: 'fle_2', fileName: 'b.txt', page: null },
    ]);
    expect(asked).toEqual([
      {
        principal: { userId: 'usr_7', keyId: null, isAdmin: false },
        collectionId: 'col_1',
        query: { text: 'q', topK: 2, offset: 0, mode: 'hybrid' },
      },
    ]);
  });

  it('adds a file as the acting user, and says an editor role is needed when refused', async () => {
    const file = {
      id: 'fle_9',
      name: 'a.pdf',
      type: 'application/pdf',
      size: 0,
      status: 'pending',
      createdAt: '2026-01-01T00:00:00.000Z',
      collectionId: 'col_1',
    };
    const ok = { add: async () => file } as unknown as FilesService;
    expect(
      await new RunCollectionsProvider(unusedCollections, ok, unusedSearch)
        .forUser('usr_7')
        .addFile('col_1', { name: 'a.pdf', url: 'https://example.com/a.pdf' }),
    ).toEqual({
      id: 'fle_9',
      collectionId: 'col_1',
      name: 'a.pdf',
      type: 'application/pdf',
      size: 0,
      status: 'pending',
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    const refused = {
      add: () => Promise.reject(AppError.forbidden('This needs the editor role on collection col_1; you are viewer')),
    } as unknown as FilesService;
    const error = await new RunCollectionsProvider(unusedCollections, refused, unusedSearch)
      .forUser('usr_7')
      .addFile('col_1', { name: 'a', url: 'https://example.com/a' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NodeConfigurationError);
    expect((error as Error).message).toBe(
      'This needs the editor role on collection col_1; you are viewer (the run acts as user usr_7, who started it; adding a file to a collection needs at least the editor role)',
    );
  });

  it('lists the collections the acting user holds a role on, and refuses a page out of range', async () => {
    const asked: unknown[] = [];
    const store = {
      listVisible: async (userId: string, page: unknown) => {
        asked.push({ userId, page });
        const at = new Date('2026-01-02T03:04:05.000Z');
        return {
          items: [
            {
              id: 'col_1',
              name: 'Docs',
              ownerId: 'usr_1',
              role: 'viewer',
              createdAt: at,
              updatedAt: at,
              embeddingModel: null,
              embeddingDimension: null,
            },
          ],
          total: 1,
        };
      },
    } as unknown as CollectionStore;
    const facade = new RunCollectionsProvider(collectionsService(store), filesService({}).service, unusedSearch).forUser('usr_7');
    expect(await facade.listCollections({ offset: 0, limit: 100 })).toEqual({
      items: [{ id: 'col_1', name: 'Docs', role: 'viewer', createdAt: '2026-01-02T03:04:05.000Z', updatedAt: '2026-01-02T03:04:05.000Z' }],
      total: 1,
    });
    expect(asked).toEqual([{ userId: 'usr_7', page: { offset: 0, limit: 100 } }]);
    const refused = await facade.listCollections({ offset: -1, limit: 101 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NodeConfigurationError);
    expect(refused).toMatchObject({
      message: 'Request validation failed: offset must not be less than 0; limit must not be greater than 100',
      details: {
        code: ErrorCode.VALIDATION_FAILED,
        fields: [
          { field: 'offset', reason: 'offset must not be less than 0' },
          { field: 'limit', reason: 'limit must not be greater than 100' },
        ],
      },
    });
    expect(asked).toHaveLength(1);
  });
});
