import { ExpressionEngine } from './expression-engine';
import { IsolateSandbox } from './isolate-sandbox.adapter';

/** Each expression against each scope: the host's answer (or failure) must be the isolate's. */
const EXPRESSIONS = [
  'input.query.length > 3',
  '{"text": input.query, "top_k": "5"}',
  'input.n * 2 + 1',
  'input.n / 0',
  '-input.zero',
  'input.missing',
  'input.missing === undefined',
  'input.missing.deeper',
  'input?.missing?.deeper',
  'input.list[1]',
  'input.list[7]',
  'input.list.length',
  'input.list[0].name',
  'input.query[0]',
  'input.query["length"]',
  'input.toString',
  'input.constructor',
  'input.list.map',
  'input.__proto__',
  'input.nested',
  'input.nested === input.nested',
  'input.nested + ""',
  'input.flag ? nodes.a.ok : "no"',
  'input.flag && input.nested',
  'input.none ?? "default"',
  'typeof input.list',
  '!input.query',
  '[input.n, input.query, null]',
  '{ a: input.missing }',
  '{ a: NaN }',
  'nodes.a.ok === true',
  'variables.base + "/path"',
  '`plain`',
  'Math.PI',
  'input.n, input.query',
  '"5" == 5',
  'input.big > 1e308 * 10',
  'input.list["1"]',
  'input.list["01"]',
  'input.query[100]',
  'input.n % 0',
  'input.odd',
  'input["__proto__"]',
  '"\\u00e9\\n" + input.query',
  '~input.n << 2',
];

const SCOPES = [
  {
    input: { query: 'what is a vector', n: 3, zero: 0, list: [{ name: 'a' }, 2], nested: { x: 1 }, flag: true, none: null },
    nodes: Object.freeze({ a: { ok: true } }),
    variables: Object.freeze({ base: 'https://example.com' }),
  },
  {
    input: { query: 'hi', n: -1.5, zero: -0, list: [], flag: false, big: 1e308 },
    nodes: Object.freeze({ a: {} }),
    variables: Object.freeze({}),
  },
  { input: null, nodes: Object.freeze({}), variables: Object.freeze({}) },
  { input: JSON.parse('{"__proto__": 5, "odd": "é\\u2028\\"q\\"", "n": 7}'), nodes: Object.freeze({}), variables: Object.freeze({}) },
  { input: 'a string', nodes: Object.freeze({ a: null }), variables: Object.freeze({ base: 7 }) },
];

const answer = (engine: ExpressionEngine, source: string, scope: Record<string, unknown>) =>
  engine.evaluate(source, scope).then(
    (value) => ({ value }),
    (error: Error) => ({ error: error.message }),
  );

describe('expressions the host evaluates', () => {
  let host: ExpressionEngine;
  let isolate: ExpressionEngine;

  beforeAll(() => {
    host = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: 500 });
    isolate = new ExpressionEngine({ poolSize: 1, memoryLimitMb: 16, timeoutMs: 500, directEvaluation: false });
  });

  afterAll(async () => {
    await host.close();
    await isolate.close();
  });

  it('answers as the isolate does, failures included', async () => {
    for (const scope of SCOPES) {
      for (const source of EXPRESSIONS) {
        const [fromHost, fromIsolate] = [await answer(host, source, scope), await answer(isolate, source, scope)];
        expect({ source, scope: scope.input, ...fromHost }).toEqual({ source, scope: scope.input, ...fromIsolate });
      }
    }
  });

  it('answers the commonest shapes without a call into an isolate, with values of their own', async () => {
    const runSync = jest.spyOn(IsolateSandbox.prototype, 'runSync');
    try {
      const input = { query: 'what is a vector', meta: { kind: 'question' } };
      expect(await host.evaluate('input.query.length > 3', { input })).toBe(true);
      const built = (await host.evaluate('{"text": input.query, "meta": input.meta}', { input })) as { meta: object };
      expect(built).toEqual({ text: 'what is a vector', meta: { kind: 'question' } });
      // A copy, as the isolate's answer is: changing it changes nothing of the input.
      expect(built.meta).not.toBe(input.meta);
      expect(runSync).not.toHaveBeenCalled();
      // A value the host leaves alone (an object an operator would convert) goes to the isolate as before.
      expect(await host.evaluate('input.meta + ""', { input })).toBe('[object Object]');
      expect(runSync).toHaveBeenCalledTimes(1);
    } finally {
      runSync.mockRestore();
    }
  });
});
