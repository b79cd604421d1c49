/** Unit specs live beside the code; contract suites and e2e tests under test/. */
module.exports = {
  testEnvironment: 'node',
  rootDir: '.',
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/plugins/**/*.spec.ts',
    '<rootDir>/console/**/*.spec.ts',
    '<rootDir>/test/contracts/**/*.contract.ts',
    '<rootDir>/test/e2e/**/*.e2e-spec.ts',
    '<rootDir>/test/lint/**/*.spec.ts',
  ],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // Plugins import the SDK by the package's name, as outside plugins do: from sources it is src/sdk.
  moduleNameMapper: {
    '^workflow-collection-service/sdk$': '<rootDir>/src/sdk/index.ts',
    '^workflow-collection-service/sdk/testing$': '<rootDir>/src/sdk/testing.ts',
  },
  transform: {
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
  testTimeout: 60_000,
  // A suite that leaves a handle open (a socket, a timer) must not keep the whole run waiting past
  // CI's time limit once every test has answered: jest ends the process and prints the warning,
  // and `--detectOpenHandles` on that suite names the handle.
  forceExit: true,
};
