// @ts-check
const tseslint = require('typescript-eslint');
const importX = require('eslint-plugin-import-x');

const DRIVERS = ['mongoose', 'mongodb', 'bull', '@nestjs/bull', 'ioredis', '@elastic/elasticsearch', 'better-sqlite3', 'sqlite-vec', 'isolated-vm'];
const driverMessage = 'Only adapters talk to database, queue and sandbox drivers (ARCHITECTURE.md, dependency rules).';
const nestBullMessage = '@nestjs/bull belongs to the Bull adapter (src/jobs/bull): job handlers are service methods marked @OnJob (src/jobs/on-job.decorator.ts).';

/** Files allowed to import drivers: the adapters and the infrastructure that opens connections. */
const ADAPTERS = [
  'src/storage/embedded/**',
  'src/storage/mongo/**',
  'src/**/*.adapter.ts',
  'src/**/embedded/**',
  'src/**/mongo/**',
  'src/**/bull/**',
  'src/**/redis/**',
  'src/**/elasticsearch/**',
];

/**
 * Port areas: each holds its ports (`<name>.port.ts`), an `embedded/` adapter and one folder per
 * technology beside them. They sit beneath the features: what they know of a feature is at most
 * its domain records (`*.model.ts`), never its services or modules.
 */
const PORT_AREAS = ['embeddings', 'jobs', 'rate-limit', 'search', 'storage'];
/** Feature folders of src/: they use the ports; the port areas, common and config never import them. */
const FEATURES = ['auth', 'collections', 'credentials', 'engine', 'health', 'ingestion', 'mcp', 'metrics', 'runs', 'workflows'];
const driverPaths = DRIVERS.map((name) => ({ name, message: name === '@nestjs/bull' ? nestBullMessage : driverMessage }));
/** Its files beyond the entry point are not its public API, for anyone. */
const nestBullInternals = { group: ['@nestjs/bull/*'], message: `${nestBullMessage} Its other files are not its public API.` };
const layer = (folders, message) => ({ group: folders.map((folder) => `**/${folder}/*`), message });
/** A feature's files, but for its domain records. */
const featuresButModels = (where) => ({
  group: [...FEATURES.map((folder) => `**/${folder}/*`), '!**/*.model'],
  message: `${where} is a port area beneath the features: it may import their domain records (*.model.ts) and nothing else of them (ARCHITECTURE.md, dependency rules).`,
});

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
    files: PORT_AREAS.map((area) => `src/${area}/**/*.ts`),
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [featuresButModels('This file')] }] },
  },
  {
    files: PORT_AREAS.map((area) => `src/${area}/**/*.ts`),
    ignores: [...ADAPTERS, '**/*.spec.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: driverPaths, patterns: [nestBullInternals, featuresButModels('This file')] }] },
  },
  {
    files: ['src/common/**/*.ts', 'src/config/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: driverPaths,
          patterns: [nestBullInternals, layer([...FEATURES, ...PORT_AREAS], 'common/ and config/ sit beneath everything: they import neither features nor ports (ARCHITECTURE.md, dependency rules).')],
        },
      ],
    },
  },
  {
    // No import cycles in the service, its plugins or the console: a cycle makes load order decide
    // what a module sees, and it hides which of two rooms sits beneath the other.
    files: ['src/**/*.ts', 'plugins/**/*.ts', 'console/**/*.ts', 'console/**/*.tsx'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.tsx', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.json'] })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
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
