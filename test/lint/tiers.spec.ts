import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';

const { TEST_FILE, tiersOf } = require('../tiers') as {
  TEST_FILE: RegExp;
  tiersOf: (file: string) => string[];
};

const root = join(__dirname, '..', '..');

/** Every .ts file of the folders that hold tests, relative to the repository with `/`. */
function sources(): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts') || entry.name.endsWith('.tsx')) found.push(relative(root, path).split(sep).join('/'));
    }
  };
  for (const dir of ['src', 'plugins', 'console', 'test']) visit(join(root, dir));
  return found;
}

const read = (file: string) => readFileSync(join(root, file), 'utf8');
/** The test files, this one aside: its patterns below would find themselves. */
const tests = sources().filter((file) => TEST_FILE.test(file) && file !== 'test/lint/tiers.spec.ts');

/** The test tiers of jest.config.js (test/tiers.js, docs/testing.md). */
describe('test tiers', () => {
  it('put every test file in exactly one tier', () => {
    expect(tests.length).toBeGreaterThan(100);
    const misplaced = tests.map((file) => [file, tiersOf(file)] as const).filter(([, tiers]) => tiers.length !== 1);
    expect(misplaced).toEqual([]);
  });

  it('leave no suite outside the tiers: every file that declares tests is named as a test file', () => {
    const unnamed = sources().filter((file) => !TEST_FILE.test(file) && /^describe(\.each\(.*\))?\(/m.test(read(file)));
    expect(unnamed).toEqual([]);
  });

  it('run every suite that launches chromium in the browser tier, and only those', () => {
    const launches = (file: string) => /console-browser'|from 'playwright-core'/.test(read(file));
    const browser = tests.filter((file) => tiersOf(file)[0] === 'browser');
    expect(tests.filter(launches).sort()).toEqual(browser.sort());
  });

  it('keep the unit tier free of services, browsers and Redis', () => {
    const heavy = /startTestApp|testRedis|console-browser'|spawnCollecting|from 'ioredis'|from 'playwright-core'/;
    const unit = tests.filter((file) => tiersOf(file)[0] === 'unit');
    expect(unit.filter((file) => heavy.test(read(file)))).toEqual([]);
  });

  it('are what jest runs: the projects of jest.config.js list every test file once', async () => {
    const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
    const { stdout } = await promisify(execFile)(process.execPath, [jest, '--listTests', '--json'], { cwd: root, timeout: 120_000 });
    const listed = (JSON.parse(stdout.slice(stdout.indexOf('['))) as string[]).map((file) => relative(root, file).split(sep).join('/'));
    expect(listed.filter((file) => file !== 'test/lint/tiers.spec.ts').sort()).toEqual([...tests].sort());
  }, 120_000);
});
