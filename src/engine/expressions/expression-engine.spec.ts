// Not split, though over 500 lines: one describe per aspect of the one engine (where an evaluation
// runs, templates, result limits, failures, hostile code, isolation, cancellation), all sharing the
// helpers above the first (failureOf, reasonOf, withOneProcess); split, each file would repeat them.
import { AppError, ErrorCode } from '../../common/app-error';
import { ExpressionEngine, ExpressionEngineOptions, isTemplate } from './expression-engine';
import { workShare } from '../../jobs/fair-turns';

const TIMEOUT_MS = 250;
const CPU_EXHAUSTED = `TIMEOUT: used more than its ${TIMEOUT_MS} ms of CPU time`;

async function failureOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

/** The reason of an EXPRESSION_FAILED error, after checking the error's shape. */
async function reasonOf(promise: Promise<unknown>, source: string): Promise<string> {
  const error = await failureOf(promise);
  expect(error.code).toBe(ErrorCode.EXPRESSION_FAILED);
  const details = error.details as { expression: string; reason: string };
  expect(details.expression).toBe(source);
  expect(error.message).toBe(`Expression failed: ${details.reason}`);
  return details.reason;
}

/** An engine with one sandbox process, started; `use` gets its id. */
async function withOneProcess(
  options: Partial<ExpressionEngineOptions>,
  use: (engine: ExpressionEngine, pid: number) => Promise<void>,
): Promise<void> {
  const single = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 32, timeoutMs: TIMEOUT_MS, ...options });
  try {
    await expect(single.evaluate('[1].map((x) => x + 1)', {})).resolves.toEqual([2]);
    await use(single, single.sandboxProcessIds[0]);
  } finally {
    await single.close();
  }
}

describe('ExpressionEngine', () => {
  let engine: ExpressionEngine;

  beforeAll(() => {
    engine = new ExpressionEngine({ poolSize: 2, memoryLimitMb: 32, timeoutMs: TIMEOUT_MS });
  });

  afterAll(async () => {
    await engine.close();
  });

  const evaluate = (source: string, scope: Record<string, unknown> = {}) => engine.evaluate(source, scope);
  const reason = (source: string, scope: Record<string, unknown> = {}) => reasonOf(evaluate(source, scope), source);

  describe('expressions', () => {
    it('adds two inputs', async () => {
      await expect(evaluate('input.a + input.b', { input: { a: 1, b: 2 } })).resolves.toBe(3);
    });

    it('reads a bare property, as in a URL parameter', async () => {
      await expect(evaluate('input.url', { input: { url: 'https://example.com/x' } })).resolves.toBe('https://example.com/x');
    });

    it('parses a leading brace as an object literal, not a block', async () => {
      await expect(evaluate('{"text": input.query, "top_k": "5"}', { input: { query: 'cats' } })).resolves.toEqual({
        text: 'cats',
        top_k: '5',
      });
    });

    it('turns a frozen scope value into JSON once for every evaluation, an unfrozen one each time', async () => {
      const serialised = { frozen: 0, open: 0 };
      const frozen = Object.freeze({ toJSON: () => (serialised.frozen++, { n: 2 }) });
      const open = { toJSON: () => (serialised.open++, { n: 3 }) };
      for (const source of ['nodes.n * 10', 'nodes.n + input.n', '`${nodes.n}-${input.n}`']) {
        await evaluate(source, { nodes: frozen, input: open });
      }
      await expect(evaluate('[nodes.n, input.n, item]', { nodes: frozen, input: open, item: undefined })).resolves.toEqual([2, 3, null]);
      // The first source does not mention input: it is not copied at all.
      expect(serialised).toEqual({ frozen: 1, open: 3 });
    });

    it('reads variables and the outputs of earlier nodes', async () => {
      const scope = { variables: { name: 'Ann' }, nodes: { n1: { response: { status: 201, headers: {}, body: {} } } } };
      await expect(evaluate('variables.name', scope)).resolves.toBe('Ann');
      await expect(evaluate('nodes.n1.response.status', scope)).resolves.toBe(201);
    });

    it('maps, filters and reduces arrays', async () => {
      const scope = {
        item: {
          files: [
            { id: 'a', size: 3 },
            { id: 'b', size: 12 },
            { id: 'c', size: 40 },
          ],
        },
      };
      await expect(evaluate('item.files.filter(f => f.size > 10).map(f => f.id)', scope)).resolves.toEqual(['b', 'c']);
      await expect(evaluate('item.files.reduce((sum, f) => sum + f.size, 0)', scope)).resolves.toBe(55);
    });

    it('has Math, JSON and Date', async () => {
      await expect(evaluate('Math.max(...input.xs)', { input: { xs: [3, 9, 4] } })).resolves.toBe(9);
      await expect(evaluate('JSON.parse(JSON.stringify({ a: [1] })).a')).resolves.toEqual([1]);
      await expect(evaluate('new Date(0).toISOString()')).resolves.toBe('1970-01-01T00:00:00.000Z');
      await expect(evaluate('typeof Date.now()')).resolves.toBe('number');
    });

    it('returns JSON values: undefined as null, Dates as strings', async () => {
      await expect(evaluate('input.missing', { input: {} })).resolves.toBeNull();
      await expect(evaluate('({ when: new Date(0), nested: [true, null] })')).resolves.toEqual({
        when: '1970-01-01T00:00:00.000Z',
        nested: [true, null],
      });
    });

    it('runs an expression spanning lines and ending in a comment', async () => {
      await expect(evaluate('input.a\n  * 2 // doubled', { input: { a: 4 } })).resolves.toBe(8);
    });

    it('treats the whole string as an expression in evaluateExpression, `${` included', async () => {
      await expect(engine.evaluateExpression('`id-${input.id}`', { input: { id: 7 } })).resolves.toBe('id-7');
    });

    it('evaluates a 1 MB input string', async () => {
      const big = 'x'.repeat(1024 * 1024);
      await expect(evaluate('input.text.length', { input: { text: big } })).resolves.toBe(big.length);
      await expect(evaluate('input.text + "!"', { input: { text: big } })).resolves.toBe(`${big}!`);
    });

    it('copies in only the scope names the expression mentions', async () => {
      const scope = { input: { a: 1 }, nodes: { huge: { value: 10n } } };
      await expect(evaluate('input.a', scope)).resolves.toBe(1);
      const why = await reason('nodes.huge', scope);
      expect(why).toMatch(/^scope is not JSON-serialisable: /);
    });

    it('gives the right answer to 200 evaluations in parallel', async () => {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          evaluate(i % 2 === 0 ? 'input.a * input.b' : 'Sum: ${input.a + input.b}', { input: { a: i, b: 3 } }),
        ),
      );
      results.forEach((result, i) => expect(result).toBe(i % 2 === 0 ? i * 3 : `Sum: ${i + 3}`));
    });

    it('serves more distinct sources than its cache holds', async () => {
      const small = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: TIMEOUT_MS, cacheSize: 2 });
      try {
        for (let round = 0; round < 3; round++) {
          for (let k = 0; k < 5; k++) {
            await expect(small.evaluate(`input.n + ${k}`, { input: { n: round } })).resolves.toBe(round + k);
          }
        }
      } finally {
        await small.close();
      }
    });
  });

  describe('where an evaluation runs', () => {
    it("runs a light user's evaluation in the lane when a heavy user holds the pool, never a second one of the heavy user's", async () => {
      await withOneProcess({ wallTimeoutMs: 60_000 }, async (single, pid) => {
        const settled = new Set<string>();
        const as = (user: string | null, name: string) => {
          const evaluation = () => single.runCode(`return "${name}";`, {});
          const result = user === null ? evaluation() : workShare.run({ user, flow: `${user}-flow` }, evaluation);
          return result.finally(() => settled.add(name));
        };
        // The pool's process holds the heavy user's first evaluation and cannot answer it yet.
        process.kill(pid, 'SIGSTOP');
        try {
          const heavy = [as('heavy', 'heavy-1'), as('heavy', 'heavy-2')];
          const outsideRun = as(null, 'outside');
          await expect(as('light', 'light')).resolves.toBe('light');
          expect([...settled]).toEqual(['light']);
          process.kill(pid, 'SIGCONT');
          await expect(Promise.all([...heavy, outsideRun])).resolves.toEqual(['heavy-1', 'heavy-2', 'outside']);
        } finally {
          process.kill(pid, 'SIGCONT');
        }
      });
    });

    it('starts every sandbox process at the first evaluation, and one that ended at the next evaluation, wherever that goes', async () => {
      const pool = new ExpressionEngine({ poolSize: 2, memoryLimitMb: 16, timeoutMs: TIMEOUT_MS });
      try {
        await expect(pool.runCode('return 1;', {})).resolves.toBe(1);
        const [first, second] = pool.sandboxProcessIds;
        // The pool's two, and the lane's.
        expect(pool.sandboxProcessIds).toHaveLength(3);
        process.kill(second, 'SIGKILL');
        while (pool.sandboxProcessIds.includes(second)) await new Promise((resolve) => setTimeout(resolve, 10));
        // This one goes to the first process, which is free: the second is started again beside it.
        await expect(pool.runCode('return 2;', {})).resolves.toBe(2);
        expect(pool.sandboxProcessIds).toHaveLength(3);
        expect(pool.sandboxProcessIds).toContain(first);
        expect(pool.sandboxProcessIds).not.toContain(second);
      } finally {
        await pool.close();
      }
    });

    it('runs a bounded expression in the service process, anything else or a large input in a sandbox process', async () => {
      const fresh = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: TIMEOUT_MS });
      try {
        await expect(fresh.evaluate('${variables.baseUrl}/hello', { variables: { baseUrl: 'http://x' } })).resolves.toBe('http://x/hello');
        await expect(fresh.evaluate('input.query.length > 3', { input: { query: 'what' } })).resolves.toBe(true);
        expect(fresh.sandboxProcessIds).toEqual([]);
        await expect(fresh.evaluate('input.query.length', { input: { query: 'x'.repeat(300_000) } })).resolves.toBe(300_000);
        // The pool's one, and the lane's.
        expect(fresh.sandboxProcessIds).toHaveLength(2);
        await expect(fresh.evaluate('input.query.toUpperCase()', { input: { query: 'a' } })).resolves.toBe('A');
      } finally {
        await fresh.close();
      }
    });
  });

  describe('templates', () => {
    it('renders insertions into text', async () => {
      await expect(evaluate('Hello ${input.name}!', { input: { name: 'Ann' } })).resolves.toBe('Hello Ann!');
      await expect(
        evaluate('https://api.example.com/items/${input.id}?page=${input.page + 1}', { input: { id: 'x1', page: 0 } }),
      ).resolves.toBe('https://api.example.com/items/x1?page=1');
    });

    it('renders objects as JSON, Dates as text, null and undefined as nothing', async () => {
      const scope = { input: { o: { a: [1, 'b'] }, nothing: null } };
      await expect(evaluate('[${input.o}] [${new Date(0)}] [${input.nothing}] [${input.missing}] [${true}]', scope)).resolves.toBe(
        '[{"a":[1,"b"]}] [1970-01-01T00:00:00.000Z] [] [] [true]',
      );
    });

    it('handles braces and quotes inside an insertion', async () => {
      await expect(evaluate('${ {a: "}"}.a } and ${ `x${1 + 1}` }')).resolves.toBe('} and x2');
    });

    it('returns a template without insertions unchanged', async () => {
      await expect(engine.renderTemplate('no insertions here', {})).resolves.toBe('no insertions here');
    });

    it('names the insertion that failed', async () => {
      const source = 'ok ${input.a} bad ${input.b.c}';
      expect(await reason(source, { input: { a: 1 } })).toBe("TypeError: Cannot read properties of undefined (reading 'c') (in ${…} #2)");
    });

    it('rejects an unterminated insertion', async () => {
      const source = 'a ${input.a} b ${input.b';
      expect(await reasonOf(engine.renderTemplate(source, { input: {} }), source)).toBe('unterminated ${ at offset 15');
    });
  });

  describe('results larger than a sandbox may hand back (a quarter of its memory: 8,388,608 characters for 32 MB)', () => {
    it('refuses a template before its text is put together, naming the insertion', async () => {
      const source = 'http://h/${"x".repeat(2 ** 28)}';
      expect(await reason(source)).toBe(
        'RESULT_TOO_LARGE: its result would be 268435465 characters long, more than the 8388608 a result may have',
      );
      const second = 'a ${"x".repeat(2 ** 22)} b ${"y".repeat(2 ** 22)}';
      expect(await reason(second)).toMatch(/^RESULT_TOO_LARGE: .* \(in \$\{…\} #2\)$/);
    });

    it('refuses an expression whose result is too long, and takes one just under the limit', async () => {
      expect(await reason('"x".repeat(2 ** 28)')).toMatch(/^RESULT_TOO_LARGE: its result would be 268435458 characters long/);
      await expect(evaluate('"x".repeat(2 ** 20).length')).resolves.toBe(2 ** 20);
    });

    it("fails a Code node's result that is too long with RESULT_TOO_LARGE", async () => {
      const error = await failureOf(engine.runCode('return "x".repeat(2 ** 28);', {}));
      expect(error.code).toBe(ErrorCode.RESULT_TOO_LARGE);
      expect(error.message).toContain('more than the 8388608 a result may have');
    });
  });

  describe('failures', () => {
    it('reports a syntax error', async () => {
      expect(await reason('input.a +', { input: {} })).toMatch(/^SyntaxError: /);
      expect(await reason('${ 1 + }')).toMatch(/^SyntaxError: /);
    });

    it('refuses code that is more than one expression', async () => {
      expect(await reason('1); globalThis.x = (2')).toBe('SyntaxError: not a single expression');
      expect(await reason('while(true){}')).toMatch(/^SyntaxError: /);
    });

    it('reports an exception', async () => {
      expect(await reason('nodes.n1.response.status', { nodes: {} })).toBe(
        "TypeError: Cannot read properties of undefined (reading 'response')",
      );
      expect(await reason('(() => { throw "boom" })()')).toBe('Uncaught boom');
      expect(await reason('missing + 1')).toBe('ReferenceError: missing is not defined');
    });

    it('clips a long exception message', async () => {
      const why = await reason('(() => { throw new Error("e".repeat(1e6)) })()');
      expect(why.length).toBeLessThan(400);
    });

    it.each([
      ['() => 1', 'result is a function'],
      ['Symbol("s")', 'result is a symbol'],
      ['10n', 'result is a BigInt'],
      ['Promise.resolve(1)', 'result is a Promise'],
      ['({ nested: { fn() {} } })', 'result holds a function at key "fn"'],
    ])('refuses the non-JSON result of %s', async (source, expected) => {
      expect(await reason(source)).toBe(expected);
    });

    it('refuses a circular result', async () => {
      expect(await reason('(() => { const a = {}; a.self = a; return a })()')).toMatch(
        /^result is not serialisable: TypeError: Converting circular structure/,
      );
    });

    it('refuses a function inserted into a template', async () => {
      expect(await reason('x ${() => 1}')).toBe('result is a function');
    });
  });

  describe('hostile code', () => {
    it('times out an endless loop and keeps serving', async () => {
      expect(await reason('(() => { while(true){} })()')).toBe(CPU_EXHAUSTED);
      expect(await reason('(() => { while(true){} })()')).toBe(CPU_EXHAUSTED);
      await expect(evaluate('1 + 1')).resolves.toBe(2);
    });

    it('times out an endless loop in a promise callback', async () => {
      expect(await reason('(Promise.resolve().then(() => { while(true){} }), 1)')).toBe(CPU_EXHAUSTED);
      await expect(evaluate('1 + 1')).resolves.toBe(2);
    });

    it('holds one isolate, not the event loop, while a loop spins', async () => {
      const finished: string[] = [];
      const spinning = reason('(() => { while(true){} })()').then(() => finished.push('spin'));
      const quick = evaluate('"quick"').then(() => finished.push('quick'));
      await Promise.all([spinning, quick]);
      expect(finished).toEqual(['quick', 'spin']);
    });

    it('gives a cheap program that turns slow its full timeout', async () => {
      const source =
        'input.busyMs === 0 ? 0 : (() => { const end = Date.now() + input.busyMs; while (Date.now() < end); return input.busyMs })()';
      await expect(evaluate(source, { input: { busyMs: 0 } })).resolves.toBe(0);
      await expect(evaluate(source, { input: { busyMs: 0 } })).resolves.toBe(0);
      await expect(evaluate(source, { input: { busyMs: 30 } })).resolves.toBe(30);
      expect(await reason(source, { input: { busyMs: 10_000 } })).toBe(CPU_EXHAUSTED);
      await expect(evaluate(source, { input: { busyMs: 0 } })).resolves.toBe(0);
    });

    it('ends a memory bomb at the memory limit, replaces the isolate and keeps serving', async () => {
      const single = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 32, timeoutMs: 10_000 });
      try {
        const bomb = '(() => { const a = []; while(true) a.push(new Array(1e6).fill(1)) })()';
        expect(await reasonOf(single.evaluate(bomb, {}), bomb)).toBe('MEMORY_LIMIT: used more than its 32 MB of memory');
        await expect(single.evaluate('input.a + input.b', { input: { a: 1, b: 2 } })).resolves.toBe(3);
        expect(await reasonOf(single.evaluate(bomb, {}), bomb)).toBe('MEMORY_LIMIT: used more than its 32 MB of memory');
        await expect(single.evaluate('[1, 2].map(x => x * 2)', {})).resolves.toEqual([2, 4]);
      } finally {
        await single.close();
      }
    });

    it('survives code whose isolate V8 ends with a fatal out-of-memory error: its process is replaced', async () => {
      await withOneProcess({ timeoutMs: 10_000 }, async (single, pid) => {
        const bomb = '(() => new Array(1e9).fill(0).length)()';
        expect(await reasonOf(single.evaluate(bomb, {}), bomb)).toBe(
          'MEMORY_LIMIT: used more than its 32 MB of memory (its sandbox process died and was replaced)',
        );
        await expect(single.evaluate('[1].map((x) => x + 2)', {})).resolves.toEqual([3]);
        expect(single.sandboxProcessIds).toHaveLength(2);
        expect(single.sandboxProcessIds[0]).not.toBe(pid);
      });
    });

    it('counts CPU time, not the time a stopped process waits for a CPU', async () => {
      await withOneProcess({ wallTimeoutMs: 60_000 }, async (single, pid) => {
        // A fraction of the CPU limit of work, stopped from outside (most likely midway) for four times the limit.
        const work = '(() => { let n = 0; for (let i = 0; i < 3e7; i++) n += i % 7; return n > 0 })()';
        const result = single.evaluate(work, {});
        await new Promise((resolve) => setTimeout(resolve, 20));
        process.kill(pid, 'SIGSTOP');
        await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 4));
        process.kill(pid, 'SIGCONT');
        await expect(result).resolves.toBe(true);
      });
    });

    it('stops and replaces a process that gives no answer within the wall-clock backstop, as a different failure', async () => {
      await withOneProcess({ wallTimeoutMs: 300 }, async (single, pid) => {
        process.kill(pid, 'SIGSTOP');
        const source = '[1].map((x) => x)';
        expect(await reasonOf(single.evaluate(source, {}), source)).toBe(
          'SANDBOX_UNRESPONSIVE: did not answer within 300 ms of wall-clock time; its sandbox process was stopped and replaced',
        );
        await expect(single.evaluate('[2].map((x) => x)', {})).resolves.toEqual([2]);
        expect(single.sandboxProcessIds).not.toContain(pid);
      });
    });

    it('refuses a string past the engine limit', async () => {
      expect(await reason('"x".repeat(1e9)')).toBe('RangeError: Invalid string length');
    });

    it('stops deep recursion', async () => {
      expect(await reason('(function f() { return f() })()')).toBe('RangeError: Maximum call stack size exceeded');
      await expect(evaluate('1 + 1')).resolves.toBe(2);
    });

    it('refuses a result nested too deeply to serialise', async () => {
      // Overflowing the larger stack of isolated-vm's own threads takes a few hundred ms.
      const patient = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 32, timeoutMs: 10_000 });
      try {
        const source = '(() => { let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return a })()';
        expect(await reasonOf(patient.evaluate(source, {}), source)).toBe(
          'result is not serialisable: RangeError: Maximum call stack size exceeded',
        );
      } finally {
        await patient.close();
      }
    });

    it('does not reach the host process through constructors', async () => {
      expect(await reason('this.constructor.constructor("return process")()')).toBe(
        "TypeError: Cannot read properties of undefined (reading 'constructor')",
      );
      expect(await reason('({}).constructor.constructor("return process")()')).toBe('ReferenceError: process is not defined');
      await expect(
        evaluate(
          '(() => { const g = ({}).constructor.constructor("return this")(); return [typeof g.process, typeof g.require, typeof g.global] })()',
        ),
      ).resolves.toEqual(['undefined', 'undefined', 'undefined']);
    });

    it.each([
      ['require("fs")', 'ReferenceError: require is not defined'],
      ['process.env', 'ReferenceError: process is not defined'],
      ['setTimeout(() => 1, 0)', 'ReferenceError: setTimeout is not defined'],
      ['fetch("http://127.0.0.1")', 'ReferenceError: fetch is not defined'],
      ['import("fs")', 'Uncaught (in promise) Error: Not supported'],
    ])('has no host capability: %s', async (source, expected) => {
      expect(await reason(source)).toBe(expected);
    });

    it('has no globals that outlive an evaluation or share memory', async () => {
      await expect(
        evaluate('[typeof FinalizationRegistry, typeof SharedArrayBuffer, typeof Atomics, typeof WebAssembly]'),
      ).resolves.toEqual(['undefined', 'undefined', 'undefined', 'undefined']);
    });

    it('does not print through console', async () => {
      const stdout = jest.spyOn(process.stdout, 'write');
      const log = jest.spyOn(console, 'log');
      try {
        await expect(evaluate('(console.log("from the sandbox"), 1)')).resolves.toBe(1);
        expect(log).not.toHaveBeenCalled();
        expect(stdout).not.toHaveBeenCalledWith(expect.stringContaining('from the sandbox'), expect.anything());
      } finally {
        stdout.mockRestore();
        log.mockRestore();
      }
    });
  });

  describe('isolation between evaluations', () => {
    let single: ExpressionEngine;

    beforeAll(() => {
      single = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: TIMEOUT_MS });
    });

    afterAll(async () => {
      await single.close();
    });

    it.each([
      'Object.prototype.polluted = 1',
      'Object.defineProperty(Object.prototype, "polluted", { value: 1 })',
      'Object.setPrototypeOf(Object.prototype, { polluted: 1 })',
      'Array.prototype.map = () => "hijacked"',
      'JSON.parse = () => "hijacked"',
      'globalThis.polluted = 1',
      '(0, eval)("var polluted = 1")',
      'Object.getPrototypeOf(function* () {}).prototype.polluted = 1',
      'Error.prepareStackTrace = () => "hijacked"',
      'Object.prototype.toString = () => "hijacked"',
      'Error.prototype.name = "hijacked"',
    ])('refuses %s and leaves nothing for the next evaluation', async (attack) => {
      expect(await reasonOf(single.evaluate(attack, {}), attack)).toMatch(/^TypeError: /);
      const probe =
        '[({}).polluted, typeof polluted, [1].map(x => x + 1), JSON.parse("2"), typeof Error.prepareStackTrace, String({}), new Error("m").name]';
      await expect(single.evaluate(probe, {})).resolves.toEqual([null, 'undefined', [2], 2, 'undefined', '[object Object]', 'Error']);
    });

    it('still lets an object override what it inherits', async () => {
      await expect(single.evaluate('(() => { const o = {}; o.toString = () => "mine"; return String(o) })()', {})).resolves.toBe('mine');
      await expect(
        single.evaluate('(() => { class E extends Error { constructor() { super("m"); this.name = "E" } } return new E().name })()', {}),
      ).resolves.toBe('E');
      await expect(single.evaluate('String({})', {})).resolves.toBe('[object Object]');
    });

    it('does not show one evaluation the last RegExp match of another', async () => {
      await expect(single.evaluate('/(s3cret)/.exec(input.text)[1]', { input: { text: 'a s3cret b' } })).resolves.toBe('s3cret');
      await expect(single.evaluate('[typeof RegExp.$1, typeof RegExp.lastMatch, typeof RegExp.input]', {})).resolves.toEqual([
        'undefined',
        'undefined',
        'undefined',
      ]);
    });

    it('gives each evaluation its own copy of the inputs', async () => {
      const scope = { input: { list: [1] } };
      await expect(single.evaluate('(input.list.push(2), input.list.length)', scope)).resolves.toBe(2);
      await expect(single.evaluate('input.list.length', scope)).resolves.toBe(1);
      expect(scope.input.list).toEqual([1]);
    });
  });

  describe('cancellation and shutdown', () => {
    it('rejects with CANCELED when the signal has already fired', async () => {
      const error = await failureOf(engine.evaluate('1', {}, { signal: AbortSignal.abort() }));
      expect(error.code).toBe(ErrorCode.CANCELED);
    });

    it('stops a running evaluation when its signal fires, with the signal reason when it is an AppError', async () => {
      const slow = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: 30_000 });
      try {
        const controller = new AbortController();
        const reasonGiven = new AppError(ErrorCode.TIMEOUT, 'run timed out');
        const spinning = failureOf(slow.evaluate('(() => { while(true){} })()', {}, { signal: controller.signal }));
        // Not a bounded expression, so it waits for the only sandbox process.
        const queued = failureOf(slow.evaluate('[1].map((x) => x)', {}, { signal: controller.signal }));
        setTimeout(() => controller.abort(reasonGiven), 50);
        expect(await spinning).toBe(reasonGiven);
        expect(await queued).toBe(reasonGiven);
        await expect(slow.evaluate('input.a', { input: { a: 'still serving' } })).resolves.toBe('still serving');
      } finally {
        await slow.close();
      }
    });

    it('fails evaluations as UNAVAILABLE once closed', async () => {
      const closing = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: 5_000 });
      await closing.evaluate('1', {});
      const running = failureOf(closing.evaluate('(() => { while(true){} })()', {}));
      const queued = failureOf(closing.evaluate('[2].map((x) => x)', {}));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await closing.close();
      expect((await running).code).toBe(ErrorCode.UNAVAILABLE);
      expect((await queued).code).toBe(ErrorCode.UNAVAILABLE);
      expect((await failureOf(closing.evaluate('3', {}))).code).toBe(ErrorCode.UNAVAILABLE);
    });
  });

  it('refuses options isolated-vm cannot honour', () => {
    expect(() => new ExpressionEngine({ poolSize: 0, memoryLimitMb: 32, timeoutMs: 100 })).toThrow(AppError);
    expect(() => new ExpressionEngine({ poolSize: 1, memoryLimitMb: 4, timeoutMs: 100 })).toThrow(AppError);
  });

  it('exports isTemplate', () => {
    expect(isTemplate('${a}')).toBe(true);
  });
});
