import { randomBytes } from 'node:crypto';
import { ErrorCode } from '../common/app-error';
import { ApprovalLinks } from './approval-links';
import { SecretCipher } from '../common/secret-cipher';

describe('ApprovalLinks', () => {
  const cipher = SecretCipher.fromKey(randomBytes(32));
  const links = new ApprovalLinks(cipher, 'https://svc.example.com');
  const claim = { runId: 'run_1', nodeId: 'ask', expiresAt: new Date(Date.now() + 60_000) };

  it('makes a link under the public URL that reads back as its claim', () => {
    const url = links.url(claim);
    expect(url.startsWith('https://svc.example.com/approvals/')).toBe(true);
    expect(links.read(url.split('/').pop()!)).toEqual(claim);
  });

  it('refuses a changed payload or signature, or a link signed under another key, as not found', () => {
    const [payload, signature] = links.token(claim).split('.');
    const other = Buffer.from(JSON.stringify({ r: 'run_2', n: 'ask', e: claim.expiresAt.getTime() })).toString('base64url');
    const foreign = new ApprovalLinks(SecretCipher.fromKey(randomBytes(32)), 'https://svc.example.com').token(claim);
    for (const token of [`${other}.${signature}`, `${payload}.${signature.slice(1)}`, `${payload}`, `${payload}.${signature}.x`, foreign]) {
      expect(() => links.read(token)).toThrow(expect.objectContaining({ code: ErrorCode.NOT_FOUND }));
    }
  });

  it('refuses an expired link as gone', () => {
    const token = links.token({ ...claim, expiresAt: new Date(Date.now() - 1) });
    expect(() => links.read(token)).toThrow(expect.objectContaining({ code: ErrorCode.GONE }));
  });

  it('derives its key: the secrets key itself never signs', () => {
    expect(cipher.deriveKey('approval-links').equals(cipher.deriveKey('approval-links'))).toBe(true);
    expect(cipher.deriveKey('approval-links').equals(cipher.deriveKey('other'))).toBe(false);
  });
});
