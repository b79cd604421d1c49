import { createHash } from 'node:crypto';
import { OAuthStore } from '../domain/oauth-store.port';

/** An artefact as oidc-provider hands it to its adapter. */
export type ProviderPayload = Record<string, unknown> & { jti?: string; grantId?: string; uid?: string; userCode?: string };

/** SHA-256, hex: ids here are 256-bit random values (or public identifiers), so no salt or stretching is needed. */
export const hashOf = (value: string): string => createHash('sha256').update(value).digest('hex');

/**
 * oidc-provider's storage interface (its `Adapter`) on the service's OAuthStore, for one model
 * (`kind`). The id of a code or token is its bearer value: only its hash is stored, as are the
 * hashes of the grant, session uid and user code it is looked up by, and the payload goes without
 * its `jti` (the id again), which is put back from the id presented on reading.
 */
export class ProviderAdapter {
  constructor(
    private readonly kind: string,
    private readonly store: OAuthStore,
    private readonly onDestroyed: (kind: string, idHash: string) => void,
  ) {}

  async upsert(id: string, payload: ProviderPayload, expiresIn?: number): Promise<void> {
    const { jti: _, ...kept } = payload;
    await this.store.upsert({
      kind: this.kind,
      idHash: hashOf(id),
      payload: JSON.stringify(kept),
      grantHash: payload.grantId ? hashOf(payload.grantId) : this.kind === 'Grant' ? hashOf(id) : null,
      uidHash: payload.uid ? hashOf(payload.uid) : null,
      userCodeHash: payload.userCode ? hashOf(payload.userCode) : null,
      expiresAt: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      consumedAt: null,
    });
  }

  find(id: string): Promise<ProviderPayload | undefined> {
    return this.read(id, this.store.find(this.kind, hashOf(id), new Date()));
  }

  async findByUid(uid: string): Promise<ProviderPayload | undefined> {
    const record = await this.store.findBy(this.kind, 'uidHash', hashOf(uid), new Date());
    // A session is found by its uid but read by its id, which only its payload's jti gave: sessions keep it.
    return record ? (JSON.parse(record.payload) as ProviderPayload) : undefined;
  }

  async findByUserCode(userCode: string): Promise<ProviderPayload | undefined> {
    const record = await this.store.findBy(this.kind, 'userCodeHash', hashOf(userCode), new Date());
    return record ? (JSON.parse(record.payload) as ProviderPayload) : undefined;
  }

  async consume(id: string): Promise<void> {
    await this.store.consume(this.kind, hashOf(id), new Date());
  }

  async destroy(id: string): Promise<void> {
    const idHash = hashOf(id);
    await this.store.destroy(this.kind, idHash);
    this.onDestroyed(this.kind, idHash);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.store.revokeByGrant(hashOf(grantId));
  }

  private async read(id: string, found: ReturnType<OAuthStore['find']>): Promise<ProviderPayload | undefined> {
    const record = await found;
    if (!record) return undefined;
    const payload = JSON.parse(record.payload) as ProviderPayload;
    return { ...payload, jti: id, ...(record.consumedAt ? { consumed: Math.floor(record.consumedAt.getTime() / 1000) } : {}) };
  }
}
