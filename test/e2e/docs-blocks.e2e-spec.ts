import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { bootService, freePort, logLines, Spawned, stopService, tempDir } from '../utils/processes';

const root = join(__dirname, '..', '..');

/**
 * The pages whose shell blocks are pasted in one shell, in this order (docs/testing.md, "The docs'
 * command blocks"). The README is a shell of its own: its reader starts there, not in docs/.
 */
const SESSIONS = [
  ['README.md'],
  [
    'docs/getting-started.md',
    'docs/collections-and-search.md',
    'docs/workflows.md',
    'docs/operations.md',
    'docs/security.md',
    'docs/mcp.md',
    'docs/writing-a-node.md',
    'docs/testing.md',
  ],
];

interface Block {
  page: string;
  line: number;
  text: string;
  /** `not run: <reason>`, `run: answers errors on purpose`, or null: run, failing on an error status. */
  marker: string | null;
}

/** The ```bash blocks of a page, each with the `<!-- ... -->` comment on the line before it. */
function bashBlocks(page: string): Block[] {
  const lines = readFileSync(join(root, page), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```bash') continue;
    const end = lines.indexOf('```', i + 1);
    const marker = /^<!-- ((?:not run|run): .+) -->$/.exec(lines[i - 1] ?? '')?.[1] ?? null;
    blocks.push({ page, line: i + 1, text: lines.slice(i + 1, end).join('\n'), marker });
    i = end;
  }
  return blocks;
}

const sessions = SESSIONS.map((pages) => pages.flatMap(bashBlocks));
const where = (block: Block, offset = 0) => `${block.page}:${block.line + 1 + offset}`;
const runs = (block: Block) => !block.marker?.startsWith('not run:');

describe("the docs' command blocks", () => {
  it('are all marked run or not run, the latter with a reason', () => {
    expect(
      sessions.flat().filter((block) => block.marker !== null && !/^(not run: .{10,}|run: answers errors on purpose)$/.test(block.marker)),
    ).toEqual([]);
    // The README's user, collection and workflow; getting started and the pages after it.
    expect(sessions.map((blocks) => blocks.filter(runs).length >= 3)).toEqual([true, true]);
  });

  it('use no variable before a block above defines it, and only files that exist', () => {
    const problems: string[] = [];
    for (const blocks of sessions) {
      const defined = new Set<string>();
      for (const block of blocks) {
        block.text.split('\n').forEach((line, offset) => {
          const code = line.replace(/(^|\s)#.*$/, '');
          for (const [, name] of code.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)/g)) {
            if (!defined.has(name)) problems.push(`${where(block, offset)} uses $${name} before it is defined`);
          }
          for (const [, name] of code.matchAll(/(?:^|[\s;(&|])(?:export\s+)?([A-Z_][A-Z0-9_]*)=/g)) defined.add(name);
          for (const [, file] of code.matchAll(/(?:-d |file=)@([\w./-]+)/g)) {
            if (!existsSync(join(root, file))) problems.push(`${where(block, offset)} reads ${file}, which does not exist`);
          }
        });
      }
    }
    expect(problems).toEqual([]);
  });

  describe('pasted in order into bash, against a fresh service', () => {
    let embeddings: FakeEmbeddingsServer;
    let dataDir: string;
    let port: number;
    let service: Spawned | undefined;
    let env: Record<string, string>;

    beforeAll(async () => {
      execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
      embeddings = await FakeEmbeddingsServer.start();
      dataDir = tempDir('docs-blocks');
      port = await freePort();
      env = {
        DATA_DIR: dataDir,
        EMBEDDINGS_URL: embeddings.url,
        FETCH_ALLOWED_HOSTS: '127.0.0.1',
        EMBEDDING_THREADS: '1',
        REDIS_URL: '',
        LOG_LEVEL: 'info',
      };
      service = await bootService(port, env);
    }, 300_000);

    afterAll(async () => {
      await stopService(service);
      await embeddings?.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    /** Output once the service has logged that it listens (logged with the first-user line, if any). */
    const listened = async (spawned: Spawned) => {
      while (!logLines(spawned.output()).some((line) => line.msg === 'listening')) await new Promise((resolve) => setTimeout(resolve, 100));
      return spawned.output();
    };

    it('on its first start, the service says in one line how to create the first user and where the console is', async () => {
      await listened(service!);
      const lines = logLines(service!.output()).filter((line) => /no user yet/.test(String(line.msg)));
      expect(lines).toHaveLength(1);
      expect(lines[0].msg).toContain('npm run -s cli -- user:create --name <name> --admin');
      expect(lines[0].console).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/console$`));
    });

    /**
     * One bash per session, with no more environment than a reader's shell would have that the
     * docs count on: PATH, HOME, and the service's DATA_DIR for the CLI (a reader's is ./data).
     * `curl` fails on an error status, except in blocks marked as answering errors on purpose.
     */
    const paste = (blocks: Block[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const script = [
          'set -euo pipefail',
          '__docs_strict=1',
          'curl() { if [ "$__docs_strict" = 1 ]; then command curl --fail-with-body --show-error "$@"; else command curl "$@"; fi; }',
          ...blocks
            .filter(runs)
            .flatMap((block) => [
              `echo "@@ ${where(block)}" >&2`,
              `__docs_strict=${block.marker ? 0 : 1}`,
              block.text.replaceAll('localhost:3000', `127.0.0.1:${port}`),
            ]),
        ].join('\n');
        const shell = spawn('bash', ['-c', script], {
          cwd: root,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tempDir('home'), DATA_DIR: dataDir },
          stdio: ['ignore', 'pipe', 'pipe'],
          // A group of its own: a timeout ends the shell and whatever it started (a curl).
          detached: true,
        });
        let stdout = '';
        let stderr = '';
        shell.stdout.on('data', (chunk) => (stdout += chunk));
        shell.stderr.on('data', (chunk) => (stderr += chunk));
        const timer = setTimeout(() => process.kill(-shell.pid!, 'SIGKILL'), 360_000);
        shell.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });

    const failure = (result: { code: number | null; stdout: string; stderr: string }) =>
      result.code === 0
        ? ''
        : `exit ${result.code} in block ${[...result.stderr.matchAll(/^@@ (.+)$/gm)].at(-1)?.[1]}:\n${result.stderr.slice(-3000)}\nstdout:\n${result.stdout.slice(-2000)}`;

    it("the README's: a first user, a searched collection and a workflow's answer", async () => {
      const result = await paste(sessions[0]);
      expect(failure(result)).toBe('');
      expect(result.stdout).toContain('"fileName": "bees.txt"');
      expect(result.stdout).toMatch(/"status": "succeeded",\s*"output": \[\s*\{\s*"name": "Ada",\s*"greeting": "hello"\s*\}\s*\]/);
    }, 420_000);

    it("docs/'s, from getting started on, in one shell", async () => {
      const result = await paste(sessions[1]);
      expect(failure(result)).toBe('');
      expect(result.stdout).toContain('"route": "manual review"');
    }, 420_000);

    it('and a service started on a store with users says nothing of a first user', async () => {
      await stopService(service);
      service = await bootService(port, env);
      expect(await listened(service)).not.toContain('no user yet');
    }, 300_000);
  });
});
