import { startAuthProxy } from '../conformance/auth-proxy';
import { REVISIONS, runConformance, score } from '../conformance/conformance';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';

/**
 * The official MCP conformance suite against the running service, for each protocol era: every
 * scenario that applies to this server passes, and the lists of those that do not apply (fixtures
 * of the SDKs' reference server, capabilities this server does not declare) are not stale.
 * `npm run mcp:conformance` prints the same score.
 */
describe('MCP conformance', () => {
  let t: TestApp;
  let proxy: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    t = await startTestApp({ HOST: '127.0.0.1' });
    proxy = await startAuthProxy(t.url, BOOTSTRAP_KEY);
  }, 120_000);

  afterAll(async () => {
    await proxy?.close();
    await t?.close();
  });

  it.each(REVISIONS)(
    'passes every applicable server scenario of %s',
    async (revision) => {
      const result = score(revision, await runConformance(`${proxy.url}/mcp`, revision));
      expect(result.failures).toEqual([]);
      expect(result.stale).toEqual([]);
      expect(result.scenarios.passed).toBe(result.scenarios.applicable);
      expect(result.scenarios.applicable).toBeGreaterThanOrEqual(10);
    },
    600_000,
  );
});
