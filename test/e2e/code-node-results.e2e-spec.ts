import { startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';

/**
 * What a Code node gives back is JSON or a failure that says where it is not; what its code
 * throws is the user's error (CODE_ERROR) with the line and column of the code as written.
 * Started through the webhook, in both run modes.
 */
describe('Code node results and errors through the webhook', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });

  afterAll(async () => {
    await app?.close();
  });

  const run = async (code: string, input: unknown, runMode: 'input' | 'item' = 'input') => {
    const definition = {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'shape', type: 'code', runMode, parameters: { code } },
      ],
      edges: [{ from: 'trigger', to: 'shape' }],
    };
    const created = await app.request('POST', '/api/v1/workflows', { body: { name: 'code results', definition } });
    expect(created.status).toBe(201);
    const started = await app.request('POST', `/api/v1/workflows/${created.body.id}/runs`, { body: { runType: 'test', input } });
    expect(started.status).toBe(202);
    const record = await waitForRun(app.request, started.body.runId);
    return { record, step: record.steps.find((s: any) => s.nodeId === 'shape') };
  };

  it.each([
    ['NaN', 'return input.map((row) => ({ id: row.id, ratio: row.a / row.b }));', 'result[1].ratio is NaN', 1],
    ['Infinity', 'return input.map((row) => ({ id: row.id, ratio: row.a / 0 }));', 'result[0].ratio is Infinity', 0],
    ['undefined in an array', 'return input.map((row) => row.missing);', 'result[0] is undefined', 0],
    ['a function', 'return input.map((row) => ({ ...row, total() { return 1; } }));', 'result[0].total is a function', 0],
    [
      'a cycle',
      'const all = input.map((row) => ({ ...row })); all[1].all = all; return all;',
      'result[1].all is result again (a cycle)',
      1,
    ],
    ['a BigInt', 'return input.map((row) => ({ id: BigInt(row.a) }));', 'result[0].id is a BigInt', 0],
  ])('fails the node on %s, naming the item and the path', async (_, code, where, item) => {
    const { record, step } = await run(code, [
      { id: 1, a: 1, b: 2 },
      { id: 2, a: 0, b: 0 },
    ]);
    expect(record.status).toBe('failed');
    expect(step.error).toMatchObject({
      code: 'CODE_ERROR',
      message: `The code of node "shape" failed: result is not JSON: ${where} (item ${item})`,
      details: { nodeId: 'shape', path: where.slice(0, where.indexOf(' is ')) },
    });
  });

  it('keeps what JSON keeps: undefined object properties dropped, dates as text', async () => {
    const { record } = await run('return { kept: input.n, dropped: undefined, when: new Date(0) };', { n: 1 });
    expect(record.status).toBe('succeeded');
    expect(record.output).toEqual({ kept: 1, when: '1970-01-01T00:00:00.000Z' });
  });

  it("reports an exception as the user's error, at its line and column in the code as written", async () => {
    const { record, step } = await run('const rows = input.rows;\nconst first = rows[0];\n  return first.name.toUpperCase();', {
      rows: [{}],
    });
    expect(record.status).toBe('failed');
    expect(step.attempts).toBe(1);
    expect(step.error).toMatchObject({
      code: 'CODE_ERROR',
      message: `The code of node "shape" failed: TypeError: Cannot read properties of undefined (reading 'toUpperCase') (line 3, column 21)`,
      details: { nodeId: 'shape', line: 3, column: 21, reason: "TypeError: Cannot read properties of undefined (reading 'toUpperCase')" },
    });
  });

  it('reports an error thrown on purpose in run mode item, with the item it failed on', async () => {
    const { record, step } = await run(
      'if (item.bad) throw new Error("bad item " + itemIndex);\nreturn item;',
      [{ ok: 1 }, { bad: true }],
      'item',
    );
    expect(record.status).toBe('failed');
    expect(step.error).toMatchObject({
      code: 'CODE_ERROR',
      message: 'The code of node "shape" failed: Error: bad item 1 (line 1, column 21)',
      details: { line: 1, column: 21, itemIndex: 1 },
    });
  });

  it('reports a strict-mode syntax error the editor let through, at its place', async () => {
    const { step } = await run('const n = 1;\nwith (input) { return n; }', {});
    expect(step.error).toMatchObject({
      code: 'CODE_ERROR',
      details: { line: 2, column: 1 },
      message: expect.stringMatching(/SyntaxError: Strict mode code may not include a with statement \(line 2, column 1\)/),
    });
  });
});
