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
};
