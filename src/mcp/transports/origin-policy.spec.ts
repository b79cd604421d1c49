import { OriginPolicy } from './origin-policy';

describe('OriginPolicy', () => {
  const local = ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8080', 'http://localhost'];

  it.each(['127.0.0.1', 'localhost', '::1'])(
    'on a loopback HOST (%s) allows the pages of this machine, and still refuses others',
    (host) => {
      const policy = new OriginPolicy([], host);
      for (const origin of local) expect(policy.allows(origin)).toBe(true);
      for (const origin of [
        'http://evil.example.com',
        'https://localhost:5173',
        'http://localhost.evil.example',
        'http://127.0.0.2:80',
        'null',
      ]) {
        expect(policy.allows(origin)).toBe(false);
      }
    },
  );

  it('on any other HOST allows only MCP_ALLOWED_ORIGINS', () => {
    const policy = new OriginPolicy(['https://console.example.com/'], '0.0.0.0');
    for (const origin of local) expect(policy.allows(origin)).toBe(false);
    expect(policy.allows('https://Console.example.com')).toBe(true);
    expect(policy.allows(undefined)).toBe(true);
  });
});
