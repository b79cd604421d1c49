import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, randomFillSync } from 'node:crypto';
import { chmodSync, existsSync, linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, ErrorCode } from './app-error';
import type { AppConfig } from '../config/app-config';
import { makeDirectory } from '../config/make-directory';

const KEY_FILE = 'secrets.key';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** IVs are cut from a pool of random bytes refilled this many at a time: a call to the system's generator per value was most of the cost of sealing a step's state. */
const IV_POOL_BYTES = IV_BYTES * 512;

/**
 * AES-256-GCM for secret variables. Each value gets a fresh IV and is bound to its workflow (the
 * workflow id is the additional authenticated data), so a ciphertext copied into another workflow
 * does not decrypt. Format: `v1.<base64url(iv | tag | ciphertext)>`.
 */
export class SecretCipher {
  private readonly ivPool = Buffer.alloc(IV_POOL_BYTES);
  private ivOffset = IV_POOL_BYTES;

  private constructor(private readonly key: Buffer) {}

  static fromKey(key: Buffer): SecretCipher {
    if (key.length !== 32) throw new Error(`a secrets key must be 32 bytes, got ${key.length}`);
    return new SecretCipher(key);
  }

  /** SECRETS_KEY when set; otherwise a key generated once into DATA_DIR, readable by the owner only. */
  static fromConfig(config: AppConfig): SecretCipher {
    if (config.SECRETS_KEY) return SecretCipher.fromKey(parseKey(config.SECRETS_KEY));
    return SecretCipher.fromKey(loadOrCreateKeyFile(config.dataDir));
  }

  static isCiphertext(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(`${VERSION}.`);
  }

  /** A key of its own for `purpose` (e.g. signing links), derived from this one: neither reveals the other. */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `workflow-service:${purpose}`, 32));
  }

  encrypt(plaintext: string, workflowId: string): string {
    const iv = this.nextIv();
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(workflowId, 'utf8'));
    const encrypted = cipher.update(plaintext, 'utf8');
    // One copy into the packed value (GCM's final adds no bytes, but is kept should it).
    const tail = cipher.final();
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), encrypted, tail]).toString('base64url')}`;
  }

  /** Fresh random bytes each time, never handed out twice (the pool is refilled before it is reused). */
  private nextIv(): Buffer {
    if (this.ivOffset === IV_POOL_BYTES) {
      randomFillSync(this.ivPool);
      this.ivOffset = 0;
    }
    this.ivOffset += IV_BYTES;
    return this.ivPool.subarray(this.ivOffset - IV_BYTES, this.ivOffset);
  }

  /** @throws AppError INTERNAL when the value was not encrypted with this key for this workflow */
  decrypt(ciphertext: string, workflowId: string): string {
    if (!SecretCipher.isCiphertext(ciphertext)) throw undecryptable();
    const packed = Buffer.from(ciphertext.slice(VERSION.length + 1), 'base64url');
    if (packed.length < IV_BYTES + TAG_BYTES) throw undecryptable();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, packed.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(workflowId, 'utf8'));
      decipher.setAuthTag(packed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(packed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch (error) {
      throw undecryptable(error);
    }
  }
}

const undecryptable = (cause?: unknown) =>
  new AppError(ErrorCode.INTERNAL, 'A secret variable cannot be decrypted: was SECRETS_KEY changed?', { cause });

/** 32 bytes as 64 hex characters or as base64. */
function parseKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes: 64 hex characters or base64');
  return key;
}

/**
 * Written to a private temporary file and then hard-linked into place, which fails if the key
 * exists: two processes starting on one DATA_DIR agree on a single, complete key file.
 */
function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = join(dataDir, KEY_FILE);
  makeDirectory(dataDir);
  if (!existsSync(file)) {
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temporary, randomBytes(32).toString('base64') + '\n', { flag: 'wx', mode: 0o600 });
    try {
      linkSync(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temporary);
    }
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  return parseKey(readFileSync(file, 'utf8'));
}
