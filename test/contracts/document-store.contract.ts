import { newId } from '../../src/common/ids';
import { SqliteCollectionStore } from '../../src/storage/embedded/sqlite-collection-store.adapter';
import { SqliteMembershipStore } from '../../src/storage/embedded/sqlite-membership-store.adapter';
import { SqliteUserStore } from '../../src/storage/embedded/sqlite-user-store.adapter';
import { MongoCollectionStore } from '../../src/storage/mongo/mongo-collection-store.adapter';
import { MongoMembershipStore } from '../../src/storage/mongo/mongo-membership-store.adapter';
import { MongoUserStore } from '../../src/storage/mongo/mongo-user-store.adapter';
import { Collection } from '../../src/domain/collection.model';
import { CollectionStore } from '../../src/domain/collection-store.port';
import { MembershipStore } from '../../src/domain/membership-store.port';
import { User } from '../../src/domain/user.model';
import { ApiKey } from '../../src/domain/api-key.model';
import { UserStore } from '../../src/domain/user-store.port';
import { pick, storeBackends } from '../utils/store-backends';

const user = (name: string, at = new Date()): User => ({ id: newId('usr'), name, email: null, isAdmin: false, createdAt: at });
const collection = (ownerId: string, name: string, at: Date): Collection => ({
  id: newId('col'),
  name,
  ownerId,
  createdAt: at,
  updatedAt: at,
  embeddingModel: null,
  embeddingDimension: null,
});

describe.each(storeBackends)('document store contract: $name', (backend) => {
  let handles: Awaited<ReturnType<typeof backend.open>>;
  let users: UserStore;
  let memberships: MembershipStore;
  let collections: CollectionStore;

  beforeAll(async () => {
    handles = await backend.open();
    users = pick<UserStore>(
      handles,
      (db) => new SqliteUserStore(db),
      (c) => new MongoUserStore(c),
    );
    memberships = pick<MembershipStore>(
      handles,
      (db) => new SqliteMembershipStore(db),
      (c) => new MongoMembershipStore(c),
    );
    collections = pick<CollectionStore>(
      handles,
      (db) => new SqliteCollectionStore(db),
      (c) => new MongoCollectionStore(c),
    );
  });
  afterAll(() => handles.close());

  describe('users and API keys', () => {
    it('stores and reads users with their fields', async () => {
      const u = { ...user('Ada'), email: 'ada@example.com', isAdmin: true };
      await users.createUser(u);
      expect(await users.getUser(u.id)).toEqual(u);
      expect(await users.getUser('usr_missing')).toBeNull();
    });

    it('pages users and counts them', async () => {
      const before = await users.countUsers();
      for (let i = 0; i < 3; i++) await users.createUser(user(`p${i}`, new Date(Date.now() + i)));
      expect(await users.countUsers()).toBe(before + 3);
      const page = await users.listUsers({ offset: before, limit: 2 });
      expect(page.total).toBe(before + 3);
      expect(page.items.map((u) => u.name)).toEqual(['p0', 'p1']);
    });

    it('finds keys by hash, lists, touches and revokes them once', async () => {
      const owner = user('keys');
      await users.createUser(owner);
      const key: ApiKey = {
        id: newId('key'),
        userId: owner.id,
        name: 'ci',
        prefix: 'wcs_abcdefgh',
        hash: `hash-${owner.id}`,
        createdAt: new Date(),
        lastUsedAt: null,
        revokedAt: null,
      };
      await users.createApiKey(key);
      expect(await users.findApiKeyByHash(key.hash)).toEqual(key);
      expect(await users.findApiKeyByHash('nope')).toBeNull();
      const used = new Date(Date.now() + 1000);
      await users.touchApiKey(key.id, used);
      expect((await users.getApiKey(key.id))?.lastUsedAt).toEqual(used);
      expect(await users.listApiKeys(owner.id)).toHaveLength(1);
      expect(await users.revokeApiKey(key.id, new Date())).toBe(true);
      expect(await users.revokeApiKey(key.id, new Date())).toBe(false);
      expect((await users.findApiKeyByHash(key.hash))?.revokedAt).toBeInstanceOf(Date);
    });

    it('refuses two keys with the same hash', async () => {
      const owner = user('dup');
      await users.createUser(owner);
      const key = {
        id: newId('key'),
        userId: owner.id,
        name: 'a',
        prefix: 'p',
        hash: `dup-${owner.id}`,
        createdAt: new Date(),
        lastUsedAt: null,
        revokedAt: null,
      };
      await users.createApiKey(key);
      // Not rejects.toThrow(): a native driver's error can come from another jest realm and fail instanceof Error.
      const refusal = await users.createApiKey({ ...key, id: newId('key') }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal).not.toBeNull();
      expect((await users.listApiKeys(owner.id)).map((k) => k.id)).toEqual([key.id]);
    });
  });

  describe('collections and memberships', () => {
    it('creates a collection with its owner membership', async () => {
      const owner = user('owner');
      const c = collection(owner.id, 'Docs', new Date());
      await collections.create(c);
      expect(await collections.get(c.id)).toEqual(c);
      expect(await memberships.getRole('collection', c.id, owner.id)).toBe('owner');
    });

    it('lists only visible collections, newest first, with the role and total', async () => {
      const viewer = user('viewer');
      const owner = user('owner2');
      const base = Date.now();
      const made = [0, 1, 2].map((i) => collection(owner.id, `c${i}`, new Date(base + i * 1000)));
      for (const c of made) await collections.create(c);
      await memberships.setRole({
        resourceType: 'collection',
        resourceId: made[0].id,
        userId: viewer.id,
        role: 'viewer',
        createdAt: new Date(),
      });
      await memberships.setRole({
        resourceType: 'collection',
        resourceId: made[2].id,
        userId: viewer.id,
        role: 'editor',
        createdAt: new Date(),
      });
      const page = await collections.listVisible(viewer.id, { offset: 0, limit: 10 });
      expect(page.total).toBe(2);
      expect(page.items.map((c) => [c.name, c.role])).toEqual([
        ['c2', 'editor'],
        ['c0', 'viewer'],
      ]);
      expect((await collections.listVisible(viewer.id, { offset: 1, limit: 10 })).items.map((c) => c.name)).toEqual(['c0']);
    });

    it('upserts, lists and removes memberships', async () => {
      const id = newId('wfl');
      const m = { resourceType: 'workflow' as const, resourceId: id, userId: 'usr_a', role: 'viewer' as const, createdAt: new Date() };
      await memberships.setRole(m);
      await memberships.setRole({ ...m, role: 'editor' });
      expect(await memberships.getRole('workflow', id, 'usr_a')).toBe('editor');
      expect(await memberships.getRole('collection', id, 'usr_a')).toBeNull();
      expect((await memberships.list('workflow', id)).map((x) => x.role)).toEqual(['editor']);
      expect((await memberships.listForUser('workflow', 'usr_a')).get(id)).toBe('editor');
      expect(await memberships.remove('workflow', id, 'usr_a')).toBe(true);
      expect(await memberships.remove('workflow', id, 'usr_a')).toBe(false);
    });

    it('deletes a collection with its memberships', async () => {
      const owner = user('del');
      const c = collection(owner.id, 'Gone', new Date());
      await collections.create(c);
      expect(await collections.delete(c.id)).toBe(true);
      expect(await collections.get(c.id)).toBeNull();
      expect(await memberships.getRole('collection', c.id, owner.id)).toBeNull();
      expect(await collections.delete(c.id)).toBe(false);
    });

    it('claims the embedding model once', async () => {
      const c = collection('usr_x', 'Vectors', new Date());
      await collections.create(c);
      expect(await collections.claimEmbedding(c.id, 'use-lite-512', 512)).toEqual({ model: 'use-lite-512', dimension: 512 });
      expect(await collections.claimEmbedding(c.id, 'other', 1536)).toEqual({ model: 'use-lite-512', dimension: 512 });
    });
  });
});
