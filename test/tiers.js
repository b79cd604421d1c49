// @ts-check
/**
 * The test tiers (docs/testing.md). Every test file belongs to exactly one tier:
 * test/lint/tiers.spec.ts proves it. Paths are relative to the repository, with `/`.
 *
 * - unit: specs beside the code and the lint specs; no service, no browser, no Redis.
 * - contracts: one behaviour over every backend of a port (SQLite, MongoDB, Elasticsearch, Redis).
 * - e2e: the service through its real doors (HTTP, MCP, CLI, webhooks), without a browser.
 * - browser: every suite that launches chromium.
 * - slow: suites that kill processes over and over, or wait minutes on purpose.
 */

/** Files that are tests, whatever their tier. */
const TEST_FILE = /\.(spec|e2e-spec|contract)\.ts$/;

/** Specs beside the code that use Redis when it answers: they compare a port's backends. */
const BACKEND_SPECS = [/^src\/jobs\/jobs\.module\.spec\.ts$/, /^src\/rate-limit\/rate-limiter\.spec\.ts$/];

/** Suites that launch chromium (through test/utils/console-browser.ts). */
const BROWSER = [
  'ai-agent',
  'approval-console',
  'chat-console',
  'console-doors',
  'console',
  'web-doors',
  'workflow-canvas',
  'workflow-editor-n8n',
  'workflow-editor',
].map((name) => new RegExp(`^test/e2e/${name}\\.e2e-spec\\.ts$`));

/** Kill tests and suites that wait minutes on purpose. */
const SLOW = [/^test\/e2e\/[^/]+-kill\.e2e-spec\.ts$/, /^test\/e2e\/mcp-long-task\.e2e-spec\.ts$/];

/** @type {{ name: string, include: RegExp[], exclude: RegExp[] }[]} */
const TIERS = [
  {
    name: 'unit',
    include: [/^(src|plugins|console)\/.*\.spec\.ts$/, /^test\/lint\/.*\.spec\.ts$/],
    exclude: BACKEND_SPECS,
  },
  { name: 'contracts', include: [/^test\/contracts\/.*\.contract\.ts$/, ...BACKEND_SPECS], exclude: [] },
  { name: 'e2e', include: [/^test\/e2e\/.*\.e2e-spec\.ts$/], exclude: [...BROWSER, ...SLOW] },
  { name: 'browser', include: BROWSER, exclude: [] },
  { name: 'slow', include: SLOW, exclude: [] },
];

/** The tiers a file (relative path, `/` separated) belongs to: exactly one for every test file. */
const tiersOf = (file) =>
  TIERS.filter((t) => t.include.some((r) => r.test(file)) && !t.exclude.some((r) => r.test(file))).map((t) => t.name);

module.exports = { TEST_FILE, TIERS, tiersOf };
