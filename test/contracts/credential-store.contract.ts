import { newId } from '../../src/common/ids';
import type { Credential } from '../../src/domain/credential.model';
import type { CredentialStore } from '../../src/domain/credential-store.port';
import { SqliteCredentialStore } from '../../src/storage/embedded/sqlite-credential-store.adapter';
import { SqliteMembershipStore } from '../../src/storage/embedded/sqlite-membership-store.adapter';
import type { MembershipStore } from '../../src/domain/membership-store.port';
import { MongoCredentialStore } from '../../src/storage/mongo/mongo-credential-store.adapter';
import { MongoMembershipStore } from '../../src/storage/mongo/mongo-membership-store.adapter';
import { pick, storeBackends } from '../utils/store-backends';

const credential = (ownerId: string, name = 'api'): Credential => {
  const now = new Date();
  return {
    id: newId('crd'),
    name,
    type: 'header',
    ownerId,
    settings: { name: 'X-Api-Key' },
    allowedHosts: ['api.example.com'],
    sealed: 'v1.sealed',
    createdAt: now,
    updatedAt: now,
  };
};

describe.each(storeBackends)('credential store on $name', (backend) => {
  let close: () => Promise<void>;
  let credentials: CredentialStore;
  let memberships: MembershipStore;

  beforeAll(async () => {
    const handles = await backend.open();
    close = handles.close;
    credentials = pick(
      handles,
      (db) => new SqliteCredentialStore(db),
      (c) => new MongoCredentialStore(c),
    );
    memberships = pick(
      handles,
      (db) => new SqliteMembershipStore(db),
      (c) => new MongoMembershipStore(c),
    );
  });
  afterAll(() => close());

  it('creates a credential owned by its creator, visible to its members only', async () => {
    const c = credential('usr_owner');
    await credentials.create(c);
    expect(await credentials.get(c.id)).toEqual(c);
    expect(await memberships.getRole('credential', c.id, 'usr_owner')).toBe('owner');
    await memberships.setRole({ resourceType: 'credential', resourceId: c.id, userId: 'usr_user', role: 'viewer', createdAt: new Date() });
    const seen = await credentials.listVisible('usr_user', { offset: 0, limit: 10 });
    expect(seen.items.map((v) => [v.id, v.role])).toEqual([[c.id, 'viewer']]);
    expect((await credentials.listVisible('usr_nobody', { offset: 0, limit: 10 })).total).toBe(0);
  });

  it('replaces name, settings, allowed hosts and sealed secrets, and deletes with its members', async () => {
    const c = credential('usr_owner', 'before');
    await credentials.create(c);
    const updatedAt = new Date(c.createdAt.getTime() + 1000);
    const changes = {
      name: 'after',
      settings: { name: 'X-Other' },
      allowedHosts: ['a.example.com', 'b.example.com:8443'],
      sealed: 'v1.rotated',
    };
    expect(await credentials.update(c.id, { ...changes, updatedAt })).toBe(true);
    expect(await credentials.get(c.id)).toEqual({ ...c, ...changes, updatedAt });
    expect(await credentials.update('crd_missing', { name: 'x', settings: {}, allowedHosts: [], sealed: 's', updatedAt })).toBe(false);
    expect(await credentials.delete(c.id)).toBe(true);
    expect(await credentials.get(c.id)).toBeNull();
    expect(await memberships.getRole('credential', c.id, 'usr_owner')).toBeNull();
    expect(await credentials.delete(c.id)).toBe(false);
  });

  it('records uses and lists them newest first, paged, and forgets them with the credential', async () => {
    const c = credential('usr_owner', 'used');
    await credentials.create(c);
    const at = (s: number) => new Date(c.createdAt.getTime() + s * 1000);
    await credentials.recordUse({
      credentialId: c.id,
      userId: 'usr_a',
      at: at(1),
      host: 'api.example.com',
      kind: 'run',
      runId: 'run_1',
      allowed: true,
    });
    await credentials.recordUse({
      credentialId: c.id,
      userId: 'usr_b',
      at: at(2),
      host: 'evil.example',
      kind: 'dropdown',
      runId: null,
      allowed: false,
    });
    await credentials.recordUse({
      credentialId: c.id,
      userId: 'usr_a',
      at: at(3),
      host: 'api.example.com',
      kind: 'test',
      runId: 'run_2',
      allowed: true,
    });
    const first = await credentials.listUses(c.id, { offset: 0, limit: 2 });
    expect(first.total).toBe(3);
    expect(first.items).toEqual([
      { credentialId: c.id, userId: 'usr_a', at: at(3), host: 'api.example.com', kind: 'test', runId: 'run_2', allowed: true },
      { credentialId: c.id, userId: 'usr_b', at: at(2), host: 'evil.example', kind: 'dropdown', runId: null, allowed: false },
    ]);
    expect((await credentials.listUses(c.id, { offset: 2, limit: 2 })).items.map((u) => u.runId)).toEqual(['run_1']);
    expect((await credentials.listUses('crd_other', { offset: 0, limit: 10 })).total).toBe(0);
    await credentials.delete(c.id);
    expect((await credentials.listUses(c.id, { offset: 0, limit: 10 })).total).toBe(0);
  });
});
