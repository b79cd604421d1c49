import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startAuthProxy } from '../conformance/auth-proxy';
import { REVISIONS, runConformance, score } from '../conformance/conformance';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';

/**
 * The official MCP conformance suite against the running service, for each protocol era: every
 * scenario that applies to this server passes, and the lists of those that do not apply (fixtures
 * of the SDKs' reference server, capabilities this server does not declare) are not stale. Then
 * the documented command, `npm run mcp:conformance`, as docs/mcp.md shows it.
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
      let result = score(revision, await runConformance(`${proxy.url}/mcp`, revision));
      if (result.failures.length > 0) {
        // Once in a full CI run the 2026-07-28 listen-stream checks could not open their stream
        // (never alone, 0 of 7 tries): a second run tells a flake from a server that does not conform.
        console.warn(`conformance ${revision}, first run: ${JSON.stringify(result.failures)}`);
        result = score(revision, await runConformance(`${proxy.url}/mcp`, revision));
      }
      expect(result.failures).toEqual([]);
      expect(result.stale).toEqual([]);
      expect(result.scenarios.passed).toBe(result.scenarios.applicable);
      expect(result.scenarios.applicable).toBeGreaterThanOrEqual(10);
    },
    600_000,
  );

  it('prints the score with `npm run mcp:conformance`, and exits 0', () => {
    const run = spawnSync('npm', ['run', '--silent', 'mcp:conformance'], {
      cwd: join(__dirname, '..', '..'),
      encoding: 'utf8',
      timeout: 600_000,
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    expect(run.stdout).toMatch(/^MCP 2025-11-25: (\d+)\/\1 applicable scenarios pass/m);
    expect(run.stdout).toMatch(/^MCP 2026-07-28: (\d+)\/\1 applicable scenarios pass/m);
    expect(run.stdout).not.toContain('FAILED');
    expect(run.status).toBe(0);
  }, 660_000);
});
