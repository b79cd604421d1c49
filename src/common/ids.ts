import { randomFillSync } from 'node:crypto';

/** Prefixes of the opaque ids the service hands out; the prefix tells a human what an id names. */
export type IdPrefix = 'usr' | 'key' | 'col' | 'fle' | 'psg' | 'wfl' | 'wfv' | 'run' | 'job' | 'req' | 'crd';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const TIME_CHARS = 9;
const RANDOM_CHARS = 16;
/** Largest multiple of 36 below 256: bytes above it are skipped so every character is uniform. */
const UNBIASED_LIMIT = 252;

const pool = Buffer.allocUnsafe(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++];
}

/**
 * A prefixed id, e.g. `col_0mhx3k9a2...`: 9 base-36 characters of milliseconds then 16 random
 * ones (82 bits). Time first keeps B-tree inserts at the end of the index instead of scattered,
 * which makes inserts into large tables about three times cheaper; randomness comes from a
 * pooled CSPRNG buffer because one syscall per id showed up in request profiles.
 */
export function newId(prefix: IdPrefix): string {
  let out = Date.now().toString(36).padStart(TIME_CHARS, '0');
  while (out.length < TIME_CHARS + RANDOM_CHARS) {
    const byte = randomByte();
    if (byte < UNBIASED_LIMIT) out += ALPHABET[byte % 36];
  }
  return `${prefix}_${out}`;
}
