/**
 * Unit specs live beside the code; contract suites and e2e tests under test/. One jest project per
 * tier (test/tiers.js, docs/testing.md): `npm run test:<tier>` runs one, `npm test` all of them.
 */
const { TIERS } = require('./test/tiers');

/** A tier's patterns are relative to the repository; jest matches absolute paths. */
const ROOT = __dirname.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const absolute = (pattern) => `^${ROOT}/${pattern.source.replace(/^\^/, '')}`;

const shared = {
  testEnvironment: 'node',
  rootDir: '.',
  // Plugins import the SDK by the package's name, as outside plugins do: from sources it is src/sdk.
  moduleNameMapper: {
    '^workflow-collection-service/sdk$': '<rootDir>/src/sdk/index.ts',
    '^workflow-collection-service/sdk/testing$': '<rootDir>/src/sdk/testing.ts',
  },
  // oidc-provider and jose ship ES modules only; the tests run CommonJS, so swc compiles those two as it compiles ours.
  transformIgnorePatterns: ['/node_modules/(?!(oidc-provider|jose)/)'],
  transform: {
    '/node_modules/(oidc-provider|jose)/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          target: 'es2022',
          keepClassNames: true,
        },
        module: { type: 'commonjs' },
        sourceMaps: 'inline',
      },
    ],
  },
};

module.exports = {
  // Global options (not per project): jest reads them from here only.
  // A suite that leaves a handle open (a socket, a timer) must not keep the whole run waiting past
  // CI's time limit once every test has answered: jest ends the process and prints the warning,
  // and `--detectOpenHandles` on that suite names the handle.
  forceExit: true,
  // A global option: jest ignores it inside a project (its hooks would get the default 5 s).
  testTimeout: 60_000,
  projects: TIERS.map((tier) => ({
    ...shared,
    displayName: tier.name,
    testRegex: tier.include.map(absolute),
    testPathIgnorePatterns: ['/node_modules/', '/dist/', ...tier.exclude.map(absolute)],
  })),
};
