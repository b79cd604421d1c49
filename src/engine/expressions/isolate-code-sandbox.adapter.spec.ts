import { AppError } from '../../common/app-error';
import { ExpressionEngine } from './expression-engine';
import { IsolateCodeSandbox } from './isolate-code-sandbox.adapter';

/**
 * The Code node's sandbox against hostile code: every attempt ends as an error the workflow author
 * can read, naming the node, and neither the host nor the next run is touched.
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
    const code =
      'const big = input.filter((row) => row.total > 100);\nreturn { ids: big.map((row) => row.id), count: big.length, v: variables.tag };';
    expect(
      await sandbox.run(
        code,
        {
          input: [
            { id: 1, total: 50 },
            { id: 2, total: 150 },
          ],
          variables: { tag: 't' },
        },
        signal,
      ),
    ).toEqual({ ids: [2], count: 1, v: 't' });
    expect(await sandbox.run('let n = 0; for (const x of item) n += x; return n;', { item: [1, 2, 3] }, signal)).toBe(6);
    expect(await sandbox.run('// nothing returned', {}, signal)).toBeNull();
  });

  it("takes evaluations waiting for the busy process in the fair turns of their runs' shares", async () => {
    const order: string[] = [];
    const run = (label: string, user: string) =>
      sandbox.run('return label;', { label }, signal, { share: { user, flow: 'f' } }).then((value) => void order.push(value as string));
    // The pool's one process takes the first and the lane a1 (user a has nothing there yet, whenever
    // it answers). a2, a3 and a4 wait with turns 1, 2 and 3; user b's one gets the head's turn plus
    // one (fair-turns.ts), equal to a3's and after it, before a4: first come, first served would
    // run it last.
    await Promise.all([run('first', 'x'), run('a1', 'a'), run('a2', 'a'), run('a3', 'a'), run('a4', 'a'), run('b1', 'b')]);
    expect(order.filter((label) => label !== 'a1')).toEqual(['first', 'a2', 'a3', 'b1', 'a4']);
    expect(order).toContain('a1');
  });

  it.each([
    ['an infinite loop', 'while (true) {}', 'TIMEOUT', /used more than its 300 ms of CPU time/],
    // On a busy machine V8's collections near the limit may spend the CPU limit first: either way, a readable limit.
    [
      'a memory bomb',
      'const a = []; for (;;) a.push(new Array(1e6).fill(7));',
      'MEMORY_LIMIT|TIMEOUT',
      /used more than its 16 MB of memory|CPU time/,
    ],
    // V8's last-resort collections may spend the CPU limit before the heap gives up: either way, a readable limit.
    ['an array V8 gives up on', 'return new Array(1e9).fill(0).length;', 'MEMORY_LIMIT|TIMEOUT', /memory|CPU time/],
    ['a syntax error', 'return input +;', 'CODE_ERROR', /SyntaxError: Unexpected token ';' \(line 1, column 15\)/],
    ['a thrown error', 'const a = 1;\n  throw new Error("nope")', 'CODE_ERROR', /Error: nope \(line 2, column 9\)/],
    ['a thrown non-error', 'throw { toString() { throw 1; } }', 'CODE_ERROR', /Uncaught/],
    ['require', 'return require("child_process").execSync("id").toString();', 'CODE_ERROR', /require is not defined \(line 1, column 1\)/],
    ['process', 'return process.env;', 'CODE_ERROR', /process is not defined/],
    [
      'a constructor escape',
      'return this.constructor.constructor("return process")().env;',
      'CODE_ERROR',
      /TypeError|process is not defined|Cannot read/,
    ],
    ['a Function-constructor escape', 'return (function(){}).constructor("return process")();', 'CODE_ERROR', /process is not defined/],
    ['dynamic import', 'return import("node:fs");', 'CODE_ERROR', /import|not JSON|Promise/i],
    ['timers', 'setTimeout(() => 1, 1); return 1;', 'CODE_ERROR', /setTimeout is not defined/],
    [
      'Atomics.wait',
      'return Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10000);',
      'CODE_ERROR',
      /Atomics is not defined|SharedArrayBuffer is not defined/,
    ],
    ['a function result', 'return () => 1;', 'CODE_ERROR', /result is a function/],
    ['a symbol result', 'return Symbol("s");', 'CODE_ERROR', /result is a symbol/],
    ['a BigInt result', 'return 10n;', 'CODE_ERROR', /result is a BigInt/],
    ['a promise result', 'return Promise.resolve(1);', 'CODE_ERROR', /result is a Promise/],
    ['a getter that throws', 'return { get boom() { throw new Error("getter"); } };', 'CODE_ERROR', /getter/],
    ['a huge string', 'return "x".repeat(2 ** 29);', 'CODE_ERROR', /Invalid string length/],
    // Which limit a million nested objects meet first depends on the machine.
    [
      'a deep object',
      'let o = {}; for (let i = 0; i < 1e6; i++) o = { o }; return o;',
      'CODE_ERROR|TIMEOUT|MEMORY_LIMIT',
      /call stack|memory|CPU time/,
    ],
    [
      'NaN in an item',
      'return [{ price: 1 }, { price: 0 / 0 }];',
      'CODE_ERROR',
      /result is not JSON: result\[1\]\.price is NaN \(item 1\)/,
    ],
    ['Infinity', 'return { total: 1 / 0 };', 'CODE_ERROR', /result\.total is Infinity/],
    ['undefined in an array', 'return [1, undefined];', 'CODE_ERROR', /result\[1\] is undefined/],
    ['a function in an item', 'return [{ f() {} }];', 'CODE_ERROR', /result\[0\]\.f is a function/],
    ['a cycle', 'const a = { id: 1 }; a.self = a; return [a];', 'CODE_ERROR', /result\[0\]\.self is result\[0\] again \(a cycle\)/],
    ['a BigInt in an item', 'return [{ "odd key": 1n }];', 'CODE_ERROR', /result\[0\]\["odd key"\] is a BigInt/],
  ])('%s fails the node with a readable error', async (_, code, errorCode, reason) => {
    const error = await sandbox.run(code, { input: 1, item: 1 }, signal, { nodeId: 'transform' }).then(
      (value) => ({ returned: value }),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toMatch(new RegExp(`^(${errorCode})$`));
    expect((error as AppError).message).toMatch(/^The code of node "transform" failed: /);
    expect((error as AppError).message).toMatch(reason);
    expect((error as AppError).retryable).toBe(false);
  });

  it('keeps JSON values, dropping undefined object properties as JSON does', async () => {
    expect(await sandbox.run('return [{ a: 1, gone: undefined, when: new Date(0) }, null, "s", true];', {}, signal)).toEqual([
      { a: 1, when: '1970-01-01T00:00:00.000Z' },
      null,
      's',
      true,
    ]);
    expect(await sandbox.run('return eval("typeof process");', {}, signal)).toBe('undefined');
  });

  it('keeps one run from changing what the next one sees', async () => {
    await sandbox.run('Object.prototype.polluted = "yes"; Array.prototype.map = null; return 1;', {}, signal).catch(() => undefined);
    expect(await sandbox.run('return { polluted: ({}).polluted ?? null, mapped: [1, 2].map((x) => x * 2) };', {}, signal)).toEqual({
      polluted: null,
      mapped: [2, 4],
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("gives the run's reason when the run is canceled", async () => {
    const controller = new AbortController();
    const reason = new Error('canceled');
    setTimeout(() => controller.abort(reason), 20);
    await expect(sandbox.run('while (true) {}', {}, controller.signal)).rejects.toBe(reason);
  });
});
