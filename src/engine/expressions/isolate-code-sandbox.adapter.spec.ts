import { isNodeError } from '../../sdk';
import { ExpressionEngine } from './expression-engine';
import { IsolateCodeSandbox } from './isolate-code-sandbox.adapter';

/**
 * The Code node's sandbox against hostile code: every attempt ends as a configuration error the
 * workflow author can read, and neither the host nor the next run is touched.
 */
describe('IsolateCodeSandbox', () => {
  let engine: ExpressionEngine;
  let sandbox: IsolateCodeSandbox;
  const signal = new AbortController().signal;

  beforeAll(() => {
    engine = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: 300 });
    sandbox = new IsolateCodeSandbox(engine);
  });
  afterAll(() => engine.close());

  it('runs a function body with the scope as variables and returns its JSON result', async () => {
    const code = 'const big = input.filter((row) => row.total > 100);\nreturn { ids: big.map((row) => row.id), count: big.length, v: variables.tag };';
    expect(await sandbox.run(code, { input: [{ id: 1, total: 50 }, { id: 2, total: 150 }], variables: { tag: 't' } }, signal)).toEqual({ ids: [2], count: 1, v: 't' });
    expect(await sandbox.run('let n = 0; for (const x of item) n += x; return n;', { item: [1, 2, 3] }, signal)).toBe(6);
    expect(await sandbox.run('// nothing returned', {}, signal)).toBeNull();
  });

  it.each([
    ['an infinite loop', 'while (true) {}', /timed out/],
    ['a memory bomb', 'const a = []; for (;;) a.push(new Array(1e6).fill(7));', /memory|timed out/],
    ['a syntax error', 'return input +;', /SyntaxError/],
    ['a thrown error', 'throw new Error("nope")', /Error: nope/],
    ['a thrown non-error', 'throw { toString() { throw 1; } }', /Uncaught/],
    ['require', 'return require("child_process").execSync("id").toString();', /require is not defined/],
    ['process', 'return process.env;', /process is not defined/],
    ['a constructor escape', 'return this.constructor.constructor("return process")().env;', /TypeError|process is not defined|Cannot read/],
    ['a Function-constructor escape', 'return (function(){}).constructor("return process")();', /process is not defined/],
    ['dynamic import', 'return import("node:fs");', /import|not JSON|Promise/i],
    ['eval reaching the host', 'return eval("typeof process");', /"undefined"|undefined/],
    ['timers', 'setTimeout(() => 1, 1); return 1;', /setTimeout is not defined/],
    ['Atomics.wait', 'return Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10000);', /Atomics is not defined|SharedArrayBuffer is not defined/],
    ['a function result', 'return () => 1;', /result is a function/],
    ['a symbol result', 'return Symbol("s");', /result is a symbol/],
    ['a BigInt result', 'return 10n;', /BigInt/],
    ['a promise result', 'return Promise.resolve(1);', /Promise/],
    ['a getter that throws', 'return { get boom() { throw new Error("getter"); } };', /getter/],
    ['a huge string', 'return "x".repeat(2 ** 29);', /memory|Invalid string length|timed out/],
    ['a deep object', 'let o = {}; for (let i = 0; i < 1e6; i++) o = { o }; return o;', /call stack|memory|timed out/],
  ])('%s is a clean configuration error', async (_, code, reason) => {
    const error = await sandbox.run(code, { input: 1, item: 1 }, signal).then(
      (value) => ({ returned: value }),
      (e: unknown) => e,
    );
    if ((error as { returned?: unknown }).returned !== undefined) {
      // eval inside the sandbox sees the sandbox's globals only.
      expect(JSON.stringify((error as { returned: unknown }).returned)).toMatch(reason);
      return;
    }
    expect(isNodeError(error) && error.kind).toBe('configuration');
    expect((error as Error).message).toMatch(reason);
  });

  it('keeps one run from changing what the next one sees', async () => {
    await sandbox.run('Object.prototype.polluted = "yes"; Array.prototype.map = null; return 1;', {}, signal).catch(() => undefined);
    expect(await sandbox.run('return { polluted: ({}).polluted ?? null, mapped: [1, 2].map((x) => x * 2) };', {}, signal)).toEqual({ polluted: null, mapped: [2, 4] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('gives the run\'s reason when the run is canceled', async () => {
    const controller = new AbortController();
    const reason = new Error('canceled');
    setTimeout(() => controller.abort(reason), 20);
    await expect(sandbox.run('while (true) {}', {}, controller.signal)).rejects.toBe(reason);
  });
});
