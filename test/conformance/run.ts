/**
 * `npm run mcp:conformance`: the official MCP conformance suite against this service, both protocol
 * eras, on a fresh instance (temporary DATA_DIR, 127.0.0.1). Prints each revision's score and the
 * checks that failed; exits 1 when an applicable one did, or when one listed as not applicable passed.
 */
import { BOOTSTRAP_KEY, startTestApp } from '../utils/test-app';
import { startAuthProxy } from './auth-proxy';
import { NOT_APPLICABLE, REVISIONS, runConformance, score } from './conformance';

async function main(): Promise<number> {
  const app = await startTestApp({ HOST: '127.0.0.1' });
  const proxy = await startAuthProxy(app.url, BOOTSTRAP_KEY);
  let failed = false;
  try {
    for (const revision of REVISIONS) {
      const result = score(revision, await runConformance(`${proxy.url}/mcp`, revision));
      console.log(
        `MCP ${revision}: ${result.scenarios.passed}/${result.scenarios.applicable} applicable scenarios pass ` +
          `(${result.checks.passed}/${result.checks.applicable} checks, ${result.checks.warnings} warnings); ` +
          `${result.scenarios.notApplicable} scenarios test fixtures or capabilities this server does not have`,
      );
      for (const failure of result.failures) console.log(`  FAILED ${failure.scenario} / ${failure.check}: ${failure.message}`);
      for (const warning of result.warnings) console.log(`  warning ${warning.scenario} / ${warning.check}: ${warning.message}`);
      for (const stale of result.stale) console.log(`  listed as not applicable, but passed: ${stale}`);
      // A scenario listed as not applicable that passes means the list is out of date: as wrong as a failure.
      failed ||= result.failures.length > 0 || result.stale.length > 0;
    }
    if (process.argv.includes('--why'))
      for (const [scenario, why] of Object.entries(NOT_APPLICABLE)) console.log(`  n/a ${scenario}: ${why}`);
  } finally {
    await proxy.close();
    await app.close();
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
