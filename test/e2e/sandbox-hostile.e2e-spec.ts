import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { bothQueues } from '../utils/queues';
import { freePort, Spawned, spawnCollecting, tempDir, waitForHttp } from '../utils/processes';
import { waitForRun } from '../utils/workflows-fixtures';

const root = join(__dirname, '..', '..');
const KEY = 'wcs_sandbox_hostile_key_0123456789';
const CPU_MS = 300;
const MEMORY_MB = 16;

/** Each Code node payload, and what its run now answers: the step's error code and message. */
const CODE_CORPUS: Array<[name: string, code: string, errorCode: string, message: RegExp]> = [
  // V8 ends the isolate's process, unless the CPU limit stops the garbage collector's last attempts first.
  [
    'a huge array',
    'return new Array(1e9).fill(0).length;',
    'MEMORY_LIMIT|TIMEOUT',
    /used more than its 16 MB of memory \(its sandbox process died and was replaced\)|used more than its 300 ms of CPU time/,
  ],
  [
    'arrays until the heap is full',
    'const a = []; for (;;) a.push(new Array(1e6).fill(7));',
    // As above: on a busy machine the garbage collector's last attempts can meet the CPU limit first.
    'MEMORY_LIMIT|TIMEOUT',
    /used more than its 16 MB of memory|used more than its 300 ms of CPU time/,
  ],
  [
    'a huge typed array',
    'return new Float64Array(2 ** 28).length;',
    'CODE_ERROR',
    /RangeError: Array buffer allocation failed \(line 1, column 8\)/,
  ],
  [
    'typed arrays until the heap is full',
    'const all = []; for (;;) all.push(new Uint8Array(1e7));',
    'CODE_ERROR',
    /RangeError: Array buffer allocation failed/,
  ],
  ["'x'.repeat(2**29)", 'return "x".repeat(2 ** 29);', 'CODE_ERROR', /RangeError: Invalid string length \(line 1, column 12\)/],
  [
    'a string doubled past the limit',
    'let s = "x"; for (let i = 0; i < 40; i++) s = s + s; return s.length;',
    'CODE_ERROR',
    /RangeError: Invalid string length/,
  ],
  [
    'deep recursion',
    'const f = (n) => f(n + 1) + 1;\nreturn f(0);',
    'CODE_ERROR',
    /RangeError: Maximum call stack size exceeded \(line 1, column \d+\)/,
  ],
  [
    'JSON.parse of a huge string',
    'return JSON.parse("[" + "1,".repeat(2 ** 24) + "1]").length;',
    'TIMEOUT|MEMORY_LIMIT',
    /CPU time|memory/,
  ],
  [
    'WebAssembly.Memory growth',
    'const m = new WebAssembly.Memory({ initial: 1, maximum: 65536 });\nfor (;;) m.grow(100);',
    'CODE_ERROR',
    /ReferenceError: WebAssembly is not defined \(line 1, column 11\)/,
  ],
  [
    'an endless promise chain',
    'const loop = () => Promise.resolve().then(loop);\nloop();\nreturn 1;',
    'TIMEOUT|MEMORY_LIMIT',
    /CPU time|memory/,
  ],
  ['an endless await loop', '(async () => { for (;;) await null; })();\nreturn 1;', 'TIMEOUT', /used more than its 300 ms of CPU time/],
  [
    'Atomics.wait',
    'return Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1e9);',
    'CODE_ERROR',
    /ReferenceError: (SharedArrayBuffer|Atomics) is not defined/,
  ],
  ['an endless loop', 'while (true) {}', 'TIMEOUT', /used more than its 300 ms of CPU time/],
  [
    'CVE-2025-68613 (this of a sloppy function is the global object)',
    "return (function(){ return this.process.mainModule.require('child_process').execSync('id').toString() })();",
    'CODE_ERROR',
    /TypeError: Cannot read properties of undefined \(reading 'process'\) \(line 1, column \d+\)/,
  ],
  [
    'CVE-2026-1470 (with statement over a function, to reach its constructor)',
    "return (function(){ var constructor = 123; with(function(){}){ return constructor(\"return process.mainModule.require('child_process').execSync('env').toString().trim()\")() } })();",
    'CODE_ERROR',
    /SyntaxError: Strict mode code may not include a with statement \(line 1, column \d+\)/,
  ],
  [
    'CVE-2026-1470 without with: the Function constructor',
    "return (function(){}).constructor(\"return process.mainModule.require('child_process').execSync('env').toString().trim()\")();",
    'CODE_ERROR',
    /ReferenceError: process is not defined/,
  ],
  ['the global object', 'return typeof globalThis.process + typeof globalThis.require;', '', /^$/],
];

/** Expression payloads, in an IF node's condition: the step fails as EXPRESSION_FAILED, its reason says which limit. */
const EXPRESSION_CORPUS: Array<[name: string, expression: string, reason: RegExp]> = [
  [
    'a huge array',
    '(() => new Array(1e9).fill(0).length)()',
    /^(MEMORY_LIMIT: used more than its 16 MB of memory|TIMEOUT: used more than its 300 ms of CPU time)/,
  ],
  ['an endless loop', '(() => { while (true) {} })()', /^TIMEOUT: used more than its 300 ms of CPU time/],
  [
    'a builtin join over a billion elements, without a call in the source',
    '({ __proto__: Array.prototype, length: 1e9 }) + ""',
    /^TIMEOUT: used more than its 300 ms of CPU time/,
  ],
  [
    'CVE-2025-68613, as published',
    "(function(){ return this.process.mainModule.require('child_process').execSync('id').toString() })()",
    /^TypeError: Cannot read properties of undefined \(reading 'process'\)/,
  ],
  [
    'CVE-2026-1470, as published',
    "(function(){ var constructor = 123; with(function(){}){ return constructor(\"return process.mainModule.require('child_process').execSync('env').toString().trim()\")() } })()",
    /^SyntaxError: Strict mode code may not include a with statement/,
  ],
  [
    'CVE-2026-1470 through the constructor of a template value',
    '`${variables.constructor.constructor("return process")()}`',
    /^ReferenceError: process is not defined/,
  ],
];

/**
 * Code written to hurt, run through the webhook on the service started as it runs in production
 * (its own process, built from dist/): after each payload its run failed with an error that names
 * the node and the failure, /health answers, the next ordinary run succeeds, and the service's
 * process is the same one. On Bull as on the embedded queue: a run whose Code node kills its
 * sandbox fails as a node failure, once.
 */
describe.each(bothQueues('sandbox-hostile'))('hostile code in workflows, on $name', (queue) => {
  let service: Spawned;
  let url: string;
  let dataDir: string;
  let pid: number;

  beforeAll(async () => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-if-needed.js')], { stdio: 'inherit', cwd: root });
    dataDir = tempDir('sandbox-hostile');
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    service = spawnCollecting(process.execPath, ['--no-node-snapshot', join(root, 'dist', 'src', 'main.js')], {
      cwd: root,
      env: {
        ...process.env,
        ...(await queue.env()),
        APP_ROLE: 'all',
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        BOOTSTRAP_API_KEY: KEY,
        LOG_LEVEL: 'warn',
        EMBEDDING_THREADS: '1',
        EXPRESSION_TIMEOUT_MS: String(CPU_MS),
        EXPRESSION_MEMORY_MB: String(MEMORY_MB),
      },
    });
    await waitForHttp(`${url}/health/ready`, service);
    pid = service.child.pid!;
  }, 240_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await service.exited(30_000).catch(() => service.child.kill('SIGKILL'));
    }
    await queue.cleanup();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const request = async (method: string, path: string, options: { body?: unknown } = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: { 'x-api-key': KEY, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  /** Creates the workflow, starts it through its webhook and returns the finished run. */
  const run = async (node: Record<string, unknown>, input: unknown = { n: 1 }) => {
    const created = await request('POST', '/api/v1/workflows', {
      body: {
        name: `hostile ${node.type}`,
        definition: {
          nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, node],
          edges: [{ from: 'trigger', to: node.id }],
        },
      },
    });
    expect(created.status).toBe(201);
    const started = await request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test', input } });
    expect(started.status).toBe(202);
    return waitForRun(request, started.body.runId, { timeoutMs: 60_000 });
  };
  const stepOf = (record: any) => record.steps.find((s: any) => s.nodeId === 'hostile');

  /** What must hold after every payload. */
  const expectServiceUnharmed = async () => {
    expect((await request('GET', '/health')).status).toBe(200);
    const ordinary = await run(
      { id: 'ordinary', type: 'code', parameters: { code: 'return { next: input.n + 1, items: [1, 2].map((x) => x * input.n) };' } },
      { n: 2 },
    );
    expect(ordinary.status).toBe('succeeded');
    expect(ordinary.output).toEqual({ next: 3, items: [2, 4] });
    expect(service.child.exitCode).toBeNull();
    expect(service.child.pid).toBe(pid);
  };

  it.each(CODE_CORPUS)(
    'Code node: %s',
    async (_, code, errorCode, message) => {
      const record = await run({ id: 'hostile', type: 'code', parameters: { code } });
      if (errorCode === '') {
        // Not an error at all: the sandbox's global object has nothing of the host.
        expect(record.status).toBe('succeeded');
        expect(record.output).toBe('undefinedundefined');
      } else {
        expect(record.status).toBe('failed');
        const step = stepOf(record);
        expect(step.status).toBe('failed');
        expect(step.attempts).toBe(1);
        expect(step.error.code).toMatch(new RegExp(`^(${errorCode})$`));
        expect(step.error.message).toMatch(/^The code of node "hostile" failed: /);
        expect(step.error.message).toMatch(message);
        expect(step.error.details).toMatchObject({ nodeId: 'hostile' });
      }
      await expectServiceUnharmed();
    },
    120_000,
  );

  it.each(EXPRESSION_CORPUS)(
    'expression: %s',
    async (_, expression, reason) => {
      const record = await run({
        id: 'hostile',
        type: 'if',
        parameters: { condition: expression },
        parameterMode: { condition: 'expression' },
      });
      expect(record.status).toBe('failed');
      const step = stepOf(record);
      expect(step.error.code).toBe('EXPRESSION_FAILED');
      expect(step.error.message).toMatch(/^Expression of parameter "condition" in node "hostile" failed: /);
      expect(step.error.details.reason).toMatch(reason);
      await expectServiceUnharmed();
    },
    120_000,
  );
});
