import { Principal } from '../auth/principal';
import { AppError, ErrorCode } from '../common/app-error';
import { Collection } from '../domain/collection.model';
import { CollectionStore } from '../domain/collection-store.port';
import { CollectionsService } from './collections.service';

describe('CollectionsService.create', () => {
  const principal: Principal = { userId: 'usr_1', keyId: null, isAdmin: false };
  const created: Collection[] = [];
  const store = { create: async (collection: Collection) => void created.push(collection) } as unknown as CollectionStore;
  const unused = {} as never;
  const service = new CollectionsService(store, unused, unused, unused, unused);

  it("checks the name by CreateCollectionDto's rules and messages, whoever calls", async () => {
    await expect(service.create(principal, '   ')).rejects.toMatchObject({
      code: ErrorCode.VALIDATION_FAILED,
      details: { fields: [{ field: 'name', reason: 'name must be longer than or equal to 1 characters' }] },
    });
    await expect(service.create(principal, 'x'.repeat(201))).rejects.toMatchObject({
      details: { fields: [{ field: 'name', reason: 'name must be shorter than or equal to 200 characters' }] },
    });
    const notText = (await service.create(principal, 42 as never).catch((error: unknown) => error)) as AppError;
    expect((notText.details as { fields: unknown[] }).fields).toContainEqual({ field: 'name', reason: 'name must be a string' });
    expect(created).toEqual([]);
  });

  it('stores the trimmed name', async () => {
    expect(await service.create(principal, '  Handbook ')).toMatchObject({ name: 'Handbook', role: 'owner' });
    expect(created.map((c) => [c.name, c.ownerId])).toEqual([['Handbook', 'usr_1']]);
  });
});
