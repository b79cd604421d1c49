// @ts-check
const tseslint = require('typescript-eslint');
const importX = require('eslint-plugin-import-x');

const DRIVERS = [
  'mongoose',
  'mongodb',
  'bull',
  '@nestjs/bull',
  'ioredis',
  '@elastic/elasticsearch',
  'better-sqlite3',
  'sqlite-vec',
  'isolated-vm',
];
/** The service's package name (package.json), under which plugins import the SDK. */
const PACKAGE = require('./package.json').name;
const SDK_PACKAGE = `${PACKAGE}/sdk`;
/** Where the floors, the rooms and these rules are explained, in the repository. */
const DOC = 'docs/architecture.md';
const driverMessage = `Only adapters talk to database, queue and sandbox drivers (${DOC}, dependency rules).`;
const nestBullMessage =
  '@nestjs/bull belongs to the Bull adapter (src/jobs/bull): job handlers are service methods marked @OnJob (src/jobs/on-job.decorator.ts).';

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
 * The floors of src/, from the ground up (docs/architecture.md): sdk, config and common; the
 * domain (records and the ports that speak in them); the adapters of those ports; the features;
 * the doors. A floor imports only the floors beneath it.
 */
/** Adapter areas: the adapters of the domain's ports and the module that picks one; no ports of their own. */
const ADAPTER_AREAS = ['embeddings', 'jobs', 'model-and-tool-servers', 'rate-limit', 'search-index', 'storage'];
/** Feature rooms: they use the ports, and hold the services and the REST controllers. */
const FEATURES = ['auth', 'collections', 'credentials', 'engine', 'health', 'ingestion', 'metrics', 'oauth', 'runs', 'workflows'];
/** Doors that nothing beneath imports: the MCP server, the console's shell and the process entry points. */
const DOORS = ['mcp', 'web-console'];
const DOOR_FILES = ['app.module', 'app.factory', 'main', 'cli'];
/** What the domain may import of common/: the error type, ids and the page shape, which import nothing. */
const COMMON_FOR_DOMAIN = ['ids', 'app-error', 'page'];

const driverPaths = DRIVERS.map((name) => ({ name, message: name === '@nestjs/bull' ? nestBullMessage : driverMessage }));
/** Its files beyond the entry point are not its public API, for anyone. */
const nestBullInternals = { group: ['@nestjs/bull/*'], message: `${nestBullMessage} Its other files are not its public API.` };
const rooms = (folders) => folders.map((folder) => `**/${folder}/*`);
const layer = (group, message) => ({ group, message: `${message} (${DOC}, dependency rules).` });
const noDoors = (who) =>
  layer(
    [...rooms(DOORS), ...DOOR_FILES.map((file) => `**/src/${file}`), ...DOOR_FILES.map((file) => `../${file}`)],
    `${who} never import a door`,
  );
const noFeatures = (who) => layer(rooms(FEATURES), `${who} sit beneath the features: they import no feature`);
/**
 * The rules of a floor's rooms: `patterns` in every file, and the drivers too in files that are no
 * adapter (the options of a later block replace an earlier one's for the same rule, so the second
 * block carries the first's patterns).
 */
const floor = (roomNames, patterns) => [
  {
    files: roomNames.map((room) => `src/${room}/**/*.ts`),
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns }] },
  },
  {
    files: roomNames.map((room) => `src/${room}/**/*.ts`),
    ignores: [...ADAPTERS, '**/*.spec.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: driverPaths, patterns: [nestBullInternals, ...patterns] }] },
  },
];

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
          patterns: [
            nestBullInternals,
            layer([...rooms(['storage']), '**/domain/*-store.port'], 'MCP tools are a door onto the services: they never reach the stores'),
          ],
        },
      ],
    },
  },
  ...floor(FEATURES, [noDoors('Features')]),
  ...floor(ADAPTER_AREAS, [noFeatures('Adapter areas'), noDoors('Adapter areas')]),
  {
    files: ['src/domain/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: driverPaths,
          patterns: [
            layer(
              ['../*', '../../*', '!../sdk', '!../common', '../common/*', ...COMMON_FOR_DOMAIN.map((file) => `!../common/${file}`)],
              `The domain is the floor beneath the adapters and the features: it imports only src/sdk and common/'s ${COMMON_FOR_DOMAIN.join(', ')}`,
            ),
            layer(['@nestjs/*'], 'The domain is plain records and ports: it knows no Nest'),
          ],
        },
      ],
    },
  },
  {
    files: ['src/common/**/*.ts', 'src/config/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: driverPaths,
          patterns: [
            nestBullInternals,
            layer(
              [...rooms(['domain', ...ADAPTER_AREAS, ...FEATURES, ...DOORS]), ...DOOR_FILES.map((file) => `../${file}`)],
              'common/ and config/ sit beneath everything: they import neither the domain, nor adapters, features or doors',
            ),
          ],
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
              message:
                'The console runs in the browser and reaches the service only through its REST API: it imports preact and its own files.',
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
              group: ['**/src/**', '**/dist/**'],
              message: `Plugins import only the SDK, by the package's name as outside plugins do: ${SDK_PACKAGE} (${DOC}, dependency rules).`,
            },
            {
              group: [`${PACKAGE}/*`, `!${SDK_PACKAGE}`, `${SDK_PACKAGE}/*`, `!${SDK_PACKAGE}/testing`],
              message: `Of the service's package, plugins import only its SDK: ${SDK_PACKAGE} and ${SDK_PACKAGE}/testing (${DOC}, dependency rules).`,
            },
            { group: ['@nestjs/*'], message: 'Plugins never see Nest.' },
          ],
        },
      ],
    },
  },
);
