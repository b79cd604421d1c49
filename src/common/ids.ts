import { randomBytes } from 'node:crypto';

/** Prefixes of the opaque ids the service hands out; the prefix tells a human what an id names. */
export type IdPrefix = 'usr' | 'key' | 'col' | 'fle' | 'psg' | 'wfl' | 'wfv' | 'run' | 'job' | 'req';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A prefixed id with 128 bits of randomness, e.g. `col_3k9x...`. */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(16);
  let value = BigInt('0x' + bytes.toString('hex'));
  let out = '';
  while (value > 0n) {
    out = ALPHABET[Number(value % 36n)] + out;
    value /= 36n;
  }
  return `${prefix}_${out.padStart(25, '0')}`;
}
