// @ts-check
const tseslint = require('typescript-eslint');

const DRIVERS = ['mongoose', 'mongodb', 'bull', '@nestjs/bull', 'ioredis', '@elastic/elasticsearch', 'better-sqlite3', 'sqlite-vec', 'isolated-vm'];
const driverMessage = 'Only adapters talk to database, queue and sandbox drivers (ARCHITECTURE.md, dependency rules).';
/**
 * @nestjs/bull is the Bull adapter's (src/jobs/bull) and, outside it, only the job handler
 * decorators' that wrap its own: every handler uses those whatever the queue.
 */
const JOB_DECORATORS = 'src/jobs/job-handler.decorators.ts';
const nestBullMessage = `@nestjs/bull belongs to the Bull adapter (src/jobs/bull): job handlers use @Processor and @Process from ${JOB_DECORATORS}.`;

/** Files allowed to import drivers: the adapters and the infrastructure that opens connections. */
const ADAPTERS = [
  'src/storage/embedded/**',
  'src/storage/mongo/**',
  'src/**/*.adapter.ts',
  'src/**/embedded/**',
  'src/**/mongo/**',
  'src/**/bull/**',
  'src/**/elasticsearch/**',
];

/** Feature folders of src/: what storage and common must not reach into (they sit beneath them). */
const FEATURES = ['auth', 'collections', 'embeddings', 'engine', 'health', 'ingestion', 'jobs', 'mcp', 'search', 'workflows'];
const driverPaths = DRIVERS.map((name) => ({ name, message: name === '@nestjs/bull' ? nestBullMessage : driverMessage }));
/** Its files beyond the entry point are not its public API, for anyone. */
const nestBullInternals = { group: ['@nestjs/bull/*'], message: `${nestBullMessage} Its other files are not its public API.` };
const layer = (folders, message) => ({ group: folders.map((folder) => `**/${folder}/*`), message });
const featuresFrom = (where) =>
  layer(FEATURES, `${where} sits beneath the features: it must not import them (ARCHITECTURE.md, dependency rules).`);

module.exports = tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'data/**', 'test/fixtures/**/*.js'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-require-imports': 'off',
      'no-eval': 'error',
      'no-new-func': 'error',
      'no-implied-eval': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: [...ADAPTERS, '**/*.spec.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: driverPaths, patterns: [nestBullInternals] }],
    },
  },
  {
    files: [JOB_DECORATORS],
    rules: { 'no-restricted-imports': ['error', { paths: driverPaths.filter((path) => path.name !== '@nestjs/bull'), patterns: [nestBullInternals] }] },
  },
  {
    files: ['src/mcp/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: driverPaths,
          patterns: [nestBullInternals, layer(['storage'], 'MCP tools are a door onto the services: they never reach the stores (ARCHITECTURE.md, dependency rules).')],
        },
      ],
    },
  },
  {
    files: ['src/storage/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [featuresFrom('storage/')] }] },
  },
  {
    files: ['src/storage/**/*.ts'],
    ignores: [...ADAPTERS, '**/*.spec.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: driverPaths, patterns: [nestBullInternals, featuresFrom('storage/')] }] },
  },
  {
    files: ['src/common/**/*.ts', 'src/config/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: driverPaths, patterns: [nestBullInternals, featuresFrom('common/ and config/'), layer(['storage'], 'common/ and config/ must not import the stores.')] }] },
  },
  {
    files: ['src/sdk/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: DRIVERS.map((name) => ({ name, message: driverMessage })),
          patterns: [
            { group: ['../*', '!./*'], message: 'src/sdk imports nothing of ours: plugins depend on it alone.' },
            { group: ['@nestjs/*'], message: 'src/sdk must not depend on Nest.' },
          ],
        },
      ],
    },
  },
  {
    files: ['console/**/*.ts', 'console/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/**', '**/plugins/**', '@nestjs/*', 'node:*'],
              message: 'The console runs in the browser and reaches the service only through its REST API: it imports preact and its own files.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['plugins/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: DRIVERS.map((name) => ({ name, message: driverMessage })),
          patterns: [
            {
              group: ['**/src/**', '!**/src/sdk', '!**/src/sdk/**'],
              message: 'Plugins import only src/sdk (ARCHITECTURE.md, dependency rules).',
            },
            { group: ['@nestjs/*'], message: 'Plugins never see Nest.' },
          ],
        },
      ],
    },
  },
);
