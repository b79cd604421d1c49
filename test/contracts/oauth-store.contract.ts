import type { OAuthRecord, OAuthStore } from '../../src/domain/oauth-store.port';
import { SqliteOAuthStore } from '../../src/storage/embedded/sqlite-oauth-store.adapter';
import { MongoOAuthStore } from '../../src/storage/mongo/mongo-oauth-store.adapter';
import { pick, storeBackends } from '../utils/store-backends';

const record = (kind: string, idHash: string, extra: Partial<OAuthRecord> = {}): OAuthRecord => ({
  kind,
  idHash,
  payload: JSON.stringify({ kind, accountId: 'usr_1' }),
  grantHash: null,
  uidHash: null,
  userCodeHash: null,
  expiresAt: new Date(Date.now() + 60_000),
  consumedAt: null,
  ...extra,
});

describe.each(storeBackends)('OAuth store on $name', (backend) => {
  let close: () => Promise<void>;
  let store: OAuthStore;

  beforeAll(async () => {
    const handles = await backend.open();
    close = handles.close;
    store = pick(
      handles,
      (db) => new SqliteOAuthStore(db),
      (c) => new MongoOAuthStore(c),
    );
  });
  afterAll(() => close());

  it('keeps a record by kind and id hash, replaces it, and destroys it', async () => {
    const now = new Date();
    await store.upsert(record('AccessToken', 'h1'));
    expect((await store.find('AccessToken', 'h1', now))?.payload).toContain('usr_1');
    // The same hash of another kind is another record.
    expect(await store.find('RefreshToken', 'h1', now)).toBeNull();
    await store.upsert(record('AccessToken', 'h1', { payload: '{"replaced":true}', expiresAt: null }));
    expect(await store.find('AccessToken', 'h1', now)).toEqual(
      record('AccessToken', 'h1', { payload: '{"replaced":true}', expiresAt: null }),
    );
    await store.destroy('AccessToken', 'h1');
    expect(await store.find('AccessToken', 'h1', now)).toBeNull();
  });

  it('answers nothing for an expired record', async () => {
    const expiresAt = new Date(Date.now() + 1000);
    await store.upsert(record('AuthorizationCode', 'soon', { expiresAt }));
    expect(await store.find('AuthorizationCode', 'soon', new Date(expiresAt.getTime() - 1))).not.toBeNull();
    expect(await store.find('AuthorizationCode', 'soon', expiresAt)).toBeNull();
  });

  it('marks a code consumed', async () => {
    await store.upsert(record('AuthorizationCode', 'code'));
    const at = new Date();
    expect(await store.consume('AuthorizationCode', 'code', at)).toBe(true);
    expect((await store.find('AuthorizationCode', 'code', new Date()))?.consumedAt).toEqual(at);
    expect(await store.consume('AuthorizationCode', 'missing', at)).toBe(false);
  });

  it('finds by uid and user code hash within the kind', async () => {
    await store.upsert(record('Session', 's1', { uidHash: 'u1' }));
    await store.upsert(record('DeviceCode', 'd1', { userCodeHash: 'c1' }));
    const now = new Date();
    expect((await store.findBy('Session', 'uidHash', 'u1', now))?.idHash).toBe('s1');
    expect(await store.findBy('Grant', 'uidHash', 'u1', now)).toBeNull();
    expect((await store.findBy('DeviceCode', 'userCodeHash', 'c1', now))?.idHash).toBe('d1');
    expect(await store.findBy('DeviceCode', 'userCodeHash', 'other', now)).toBeNull();
  });

  it('revokes every artefact of a grant, of any kind, and nothing else', async () => {
    await store.upsert(record('AccessToken', 'g-at', { grantHash: 'g' }));
    await store.upsert(record('RefreshToken', 'g-rt', { grantHash: 'g' }));
    await store.upsert(record('AccessToken', 'other-at', { grantHash: 'other' }));
    expect(await store.revokeByGrant('g')).toBe(2);
    const now = new Date();
    expect(await store.find('AccessToken', 'g-at', now)).toBeNull();
    expect(await store.find('RefreshToken', 'g-rt', now)).toBeNull();
    expect(await store.find('AccessToken', 'other-at', now)).not.toBeNull();
  });
});
