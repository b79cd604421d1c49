import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/app-config';
import { SecretCipher } from './secret-cipher';

describe('SecretCipher', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-secrets-'));
  });

  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('round-trips, with a fresh IV each time', () => {
    const cipher = SecretCipher.fromConfig(loadConfig({ DATA_DIR: dataDir }));
    const a = cipher.encrypt('hunter2', 'wfl_1');
    const b = cipher.encrypt('hunter2', 'wfl_1');
    expect(a).not.toBe(b);
    expect(a).not.toContain('hunter2');
    expect(SecretCipher.isCiphertext(a)).toBe(true);
    expect(cipher.decrypt(a, 'wfl_1')).toBe('hunter2');
  });

  it('never repeats an IV, across refills of its pool of random bytes', () => {
    const cipher = SecretCipher.fromKey(Buffer.alloc(32, 7));
    const ivs = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const token = cipher.encrypt(`value ${i}`, 'wfl_1');
      ivs.add(Buffer.from(token.slice(3), 'base64url').subarray(0, 12).toString('hex'));
      expect(cipher.decrypt(token, 'wfl_1')).toBe(`value ${i}`);
    }
    expect(ivs.size).toBe(2000);
  });

  it('binds a ciphertext to its workflow and detects tampering', () => {
    const cipher = SecretCipher.fromConfig(loadConfig({ DATA_DIR: dataDir }));
    const token = cipher.encrypt('hunter2', 'wfl_1');
    expect(() => cipher.decrypt(token, 'wfl_2')).toThrow('cannot be decrypted');
    const tampered = token.slice(0, -2) + (token.endsWith('A') ? 'BB' : 'AA');
    expect(() => cipher.decrypt(tampered, 'wfl_1')).toThrow('cannot be decrypted');
  });

  it('generates one key file readable by the owner only, and reuses it', () => {
    const first = SecretCipher.fromConfig(loadConfig({ DATA_DIR: dataDir }));
    const keyFile = join(dataDir, 'secrets.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8');
    const second = SecretCipher.fromConfig(loadConfig({ DATA_DIR: dataDir }));
    expect(readFileSync(keyFile, 'utf8')).toBe(key);
    expect(second.decrypt(first.encrypt('x-secret', 'w'), 'w')).toBe('x-secret');
  });

  it('uses SECRETS_KEY when set, as hex or base64', () => {
    const hex = 'ab'.repeat(32);
    const fromHex = SecretCipher.fromConfig(loadConfig({ DATA_DIR: dataDir, SECRETS_KEY: hex }));
    const fromBase64 = SecretCipher.fromConfig(loadConfig({ DATA_DIR: dataDir, SECRETS_KEY: Buffer.from(hex, 'hex').toString('base64') }));
    expect(fromBase64.decrypt(fromHex.encrypt('v', 'w'), 'w')).toBe('v');
    expect(() => SecretCipher.fromConfig(loadConfig({ DATA_DIR: dataDir, SECRETS_KEY: 'short' }))).toThrow('32 bytes');
  });
});
