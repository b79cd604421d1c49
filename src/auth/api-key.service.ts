import { Injectable } from '@nestjs/common';
import { hash as digest, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { AppError, ErrorCode } from '../common/app-error';
import { newId } from '../common/ids';
import { ApiKey } from '../domain/api-key.model';
import { UserStore } from '../domain/user-store.port';
import { Principal } from './principal';

const KEY_PREFIX = 'wcs_';
const VISIBLE_CHARS = 12;
/** last_used_at is a hint for humans; writing it on every request would make reads cost a write. */
const TOUCH_INTERVAL_MS = 60_000;
/**
 * Authenticated keys are remembered briefly so a request costs no store round trip. A revocation
 * takes effect at once in the process that revoked the key and within this time in the others.
 */
const PRINCIPAL_TTL_MS = 10_000;
const PRINCIPAL_CACHE_SIZE = 10_000;

export interface IssuedKey {
  key: ApiKey;
  /** The secret, shown once and never stored. */
  secret: string;
}

/** A secret of the form this service issues keys in (a bootstrap key may have any form). */
export const isIssuedApiKey = (secret: string): boolean => secret.startsWith(KEY_PREFIX);

/** One call, no Hash object: every request hashes the key it presents (the cache of principals is keyed by the hash). */
export const hashApiKey = (secret: string): string => digest('sha256', secret, 'hex');

@Injectable()
export class ApiKeyService {
  private readonly lastTouched = new Map<string, number>();
  private readonly principals = new Map<string, { principal: Principal; expiresAt: number }>();
  private readonly revocations = new EventEmitter().setMaxListeners(0);

  constructor(private readonly users: UserStore) {}

  /** 256 random bits; SHA-256 is enough to store them since they cannot be guessed. */
  static generateSecret(): string {
    return KEY_PREFIX + randomBytes(32).toString('base64url');
  }

  async issue(userId: string, name: string, secret = ApiKeyService.generateSecret()): Promise<IssuedKey> {
    const key: ApiKey = {
      id: newId('key'),
      userId,
      name,
      prefix: secret.slice(0, VISIBLE_CHARS),
      hash: hashApiKey(secret),
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.users.createApiKey(key);
    return { key, secret };
  }

  /** The principal behind a presented secret; UNAUTHENTICATED for unknown or revoked keys. */
  async authenticate(secret: string | undefined): Promise<Principal> {
    if (!secret) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Missing API key: send x-api-key or Authorization: Bearer');
    const hash = hashApiKey(secret);
    const cached = this.principals.get(hash);
    if (cached && cached.expiresAt > Date.now()) {
      this.touch(cached.principal.keyId!);
      return cached.principal;
    }
    const key = await this.users.findApiKeyByHash(hash);
    if (!key || key.revokedAt) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Invalid or revoked API key');
    const user = await this.users.getUser(key.userId);
    if (!user) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Invalid or revoked API key');
    this.touch(key.id);
    const principal: Principal = { userId: user.id, keyId: key.id, isAdmin: user.isAdmin };
    this.remember(hash, principal);
    return principal;
  }

  private remember(hash: string, principal: Principal): void {
    if (this.principals.size >= PRINCIPAL_CACHE_SIZE) {
      this.principals.delete(this.principals.keys().next().value!);
    }
    this.principals.set(hash, { principal, expiresAt: Date.now() + PRINCIPAL_TTL_MS });
  }

  async list(userId: string): Promise<ApiKey[]> {
    return this.users.listApiKeys(userId);
  }

  async revoke(userId: string, keyId: string): Promise<void> {
    const key = await this.users.getApiKey(keyId);
    if (!key || key.userId !== userId) throw AppError.notFound('API key', keyId);
    await this.users.revokeApiKey(keyId, new Date());
    this.principals.delete(key.hash);
    this.revocations.emit('revoked', keyId);
  }

  /** Calls `listener` with the id of each key this process revokes, as it does; returns the unsubscribe. */
  onRevoked(listener: (keyId: string) => void): () => void {
    this.revocations.on('revoked', listener);
    return () => this.revocations.off('revoked', listener);
  }

  /**
   * Whether the key still authenticates, read from the store rather than the cache: what another
   * process (the CLI, another API process) revoked, or a user that no longer exists. A key found
   * dead is forgotten here too, so this process refuses it from now on rather than after the cache's time.
   */
  async isStillValid(keyId: string): Promise<boolean> {
    const key = await this.users.getApiKey(keyId);
    if (key && !key.revokedAt && (await this.users.getUser(key.userId))) return true;
    if (key) this.principals.delete(key.hash);
    return false;
  }

  private touch(keyId: string): void {
    const now = Date.now();
    if (now - (this.lastTouched.get(keyId) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(keyId, now);
    void this.users.touchApiKey(keyId, new Date(now)).catch(() => this.lastTouched.delete(keyId));
  }
}

/** Reads the key from `x-api-key` or `Authorization: Bearer <key>`. */
export function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const header = headers['x-api-key'];
  const direct = Array.isArray(header) ? header[0] : header;
  if (direct) return direct.trim();
  const authorization = headers.authorization;
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  const match = value?.match(/^Bearer\s+(.+)$/i);
  return match?.[1].trim();
}
