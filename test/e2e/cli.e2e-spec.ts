import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, TestApp } from '../utils/test-app';

const root = join(__dirname, '..', '..');

/**
 * The administration CLI (src/cli.ts) as an operator runs it: its own process on the data
 * directory the server uses, JSON on stdout, a message on stderr and exit code 1 for bad usage.
 */
describe('CLI', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'wcs-cli-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const cliIn = (dir: string, ...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const env = { PATH: process.env.PATH ?? '', DATA_DIR: dir, LOG_LEVEL: 'silent' };
      execFile(
        process.execPath,
        ['-r', join(root, 'scripts', 'swc-register.js'), join(root, 'src', 'cli.ts'), ...args],
        { cwd: root, env, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const cli = (...args: string[]) => cliIn(dataDir, ...args);
  const json = async (...args: string[]) => {
    const result = await cli(...args);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(result.stdout);
  };

  it('creates a user whose key the server accepts, issues and revokes keys, and never lists a secret', async () => {
    const answer = await cli('user:create', '--name', 'ann', '--email', 'ann@example.com');
    expect(answer).toMatchObject({ code: 0, stderr: '' });
    const created = JSON.parse(answer.stdout);
    expect(created.user).toMatchObject({ name: 'ann', email: 'ann@example.com', isAdmin: false });
    expect(created.apiKey.key).toMatch(/^wcs_/);
    // The secret once, under apiKey.key; the prefix listings show is shorter than it.
    expect(answer.stdout.split(created.apiKey.key)).toHaveLength(2);

    const second = await json('key:create', '--user', created.user.id, '--name', 'laptop');
    expect(second).toMatchObject({ name: 'laptop', key: expect.stringMatching(/^wcs_/) });
    await expect(json('key:revoke', '--key', second.id)).resolves.toEqual({ id: second.id, revoked: true });
    // Again: it says the key was revoked before, and when, and the time stays the first one.
    const again = await json('key:revoke', '--key', second.id);
    expect(again).toEqual({ id: second.id, revoked: true, alreadyRevokedAt: expect.any(String) });

    const listed = await cli('keys:list', '--user', created.user.id);
    expect(listed.stdout).not.toContain(created.apiKey.key);
    const keys = JSON.parse(listed.stdout).items as { id: string; revokedAt: string | null }[];
    expect(keys.find((k) => k.id === second.id)?.revokedAt).toBe(again.alreadyRevokedAt);
    expect(keys.map((k) => [k.id, k.revokedAt !== null]).sort()).toEqual(
      [
        [created.apiKey.id, false],
        [second.id, true],
      ].sort(),
    );
    expect((await json('users:list')).items.map((u: { name: string }) => u.name)).toContain('ann');

    let app: TestApp | undefined;
    try {
      app = await startTestApp({ DATA_DIR: dataDir });
      const me = await app.request('GET', '/api/v1/me', { key: created.apiKey.key });
      expect(me).toMatchObject({ status: 200, body: { id: created.user.id, keyId: created.apiKey.id } });
      expect((await app.request('GET', '/api/v1/me', { key: second.key })).status).toBe(401);
    } finally {
      await app?.close();
    }
  }, 120_000);

  it('answers bad usage with a message on stderr, usage text and exit code 1', async () => {
    const missing = await cli('user:create');
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toContain('--name is required');
    const unknown = await cli('user:delete');
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toContain('Unknown command: user:delete');
    expect(unknown.stderr).toContain('keys:list --user <userId>');
    expect(await cli('key:revoke', '--key', 'key_missing')).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'API key key_missing not found\n',
    });
    expect(await cli('keys:list', '--user', 'usr_missing')).toMatchObject({ code: 1, stdout: '', stderr: 'user usr_missing not found\n' });
  }, 120_000);

  it.each([
    [
      ['user:create', '--name', 'eve', '--admin', 'false'],
      'Unexpected argument: false (--admin takes no value: leave it out for a user who is not an admin)',
    ],
    [['user:create', '--name', 'Jane', 'Doe'], 'Unexpected argument: Doe (quote a value that holds spaces)'],
    [['user:create', '--name', 'a', '--name', 'b'], '--name is given more than once'],
    [['key:create', '--user', 'usr_x', '--admin'], '--admin is not an option of key:create'],
    [['user:create', '--name', '  '], 'Invalid options: --name: name must be longer than or equal to 1 characters'],
    [['user:create', '--name', 'eve', '--email', 'not-an-address'], 'Invalid options: --email: email must be an email'],
    [['user:create', '--name', 'bell\u0007'], 'Invalid options: --name: name must not contain control characters'],
    [
      ['key:create', '--user', 'usr_x', '--name', 'n'.repeat(101)],
      'Invalid options: --name: name must be shorter than or equal to 100 characters',
    ],
  ])(
    'refuses %j, saying why, and creates nothing',
    async (args, says) => {
      const before = (await json('users:list')).total;
      const refused = await cli(...args);
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr.split('\n')[0]).toBe(says);
      expect((await json('users:list')).total).toBe(before);
    },
    120_000,
  );

  it('checks the command before it opens the store, and reports a store it cannot open in one line', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'wcs-cli-none-'));
    try {
      const fresh = join(elsewhere, 'data');
      expect(await cli('--help')).toMatchObject({ code: 0, stdout: '', stderr: expect.stringContaining('Usage: npm run -s cli') });
      const unknown = await cliIn(fresh, 'user:delete');
      expect(unknown).toMatchObject({ code: 1, stdout: '' });
      expect(existsSync(fresh)).toBe(false);
      // DATA_DIR names a file: the system's words, no stack trace, no colours.
      writeFileSync(fresh, 'not a directory');
      const notADirectory = await cliIn(fresh, 'users:list');
      expect(notADirectory).toMatchObject({ code: 1, stdout: '' });
      expect(notADirectory.stderr).toMatch(/^EEXIST: file already exists, mkdir '.*data'\n$/);
      // A folder that cannot be made under /proc: Node's recursive mkdirSync never returned there.
      const underProc = await cliIn('/proc/wcs-cli-none/data', 'users:list');
      expect(underProc).toEqual({ code: 1, stdout: '', stderr: "ENOENT: no such file or directory, mkdir '/proc/wcs-cli-none'\n" });
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  }, 120_000);

  it('lists every user, and stops quietly when its reader closes the pipe early', async () => {
    const listed = await json('users:list');
    expect(listed.items).toHaveLength(listed.total);
    const child = spawn(process.execPath, ['-r', join(root, 'scripts', 'swc-register.js'), join(root, 'src', 'cli.ts'), 'users:list'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  }, 120_000);
});
