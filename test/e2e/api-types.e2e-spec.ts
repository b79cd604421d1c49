import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'api-types.js');
const GENERATED = join(ROOT, 'console', 'api-types.generated.ts');

/** Exit code and stderr of `node scripts/api-types.js ...args` (the CLI `npm run build` runs). */
async function apiTypes(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await run(process.execPath, [SCRIPT, ...args], { cwd: ROOT });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

/**
 * The console's API types are generated from the server's OpenAPI document (the built app,
 * in-process): the committed file must be what the server produces now, or the console was
 * type-checked against an API that no longer exists.
 */
describe('console API types generated from the OpenAPI document', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wcs-api-types-spec-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('console/api-types.generated.ts is what the server produces now', async () => {
    const answer = await apiTypes('--check');
    // On failure this names the fix: "run npm run api-types".
    expect(answer.stderr).toBe('');
    expect(answer.code).toBe(0);
  });

  it('refuses a file that drifted from the server, naming the command that fixes it', async () => {
    const stale = join(dir, 'stale.ts');
    // A response field the server does not have.
    writeFileSync(
      stale,
      readFileSync(GENERATED, 'utf8').replace('cancelRequested: boolean;', 'cancelRequested: boolean;\n            invented: string;'),
    );
    const answer = await apiTypes('--check', '--file', stale);
    expect(answer.code).toBe(1);
    expect(answer.stderr).toContain('stale.ts differs from what the server');
    expect(answer.stderr).toContain('run npm run api-types');
  });

  it('generates the response shapes of the endpoints the console reads', () => {
    const text = readFileSync(GENERATED, 'utf8');
    expect(text).toMatch(/RunSummaryDto: \{[^}]*durationMs: number \| null;/s);
    expect(text).toContain('position?: components["schemas"]["PositionDto"];');
  });
});
