import { subStepsOf } from './sub-steps';

describe('sub-steps of a step record', () => {
  it("reads an agent's model and tool calls, and nothing from a step without them or of another shape", () => {
    const model = {
      kind: 'model',
      name: 'gpt-x',
      startedAt: '2026-01-01T00:00:00.000Z',
      durationMs: 120,
      tokens: { prompt: 10, completion: 5 },
    };
    const tool = {
      kind: 'tool',
      name: 'search',
      startedAt: '2026-01-01T00:00:00.200Z',
      durationMs: 30,
      arguments: { q: 'a' },
      result: [1],
    };
    expect(subStepsOf({ nodeId: 'agent', subSteps: [model, tool, { kind: 'other', name: 'x', durationMs: 1 }, null] } as never)).toEqual([
      model,
      tool,
    ]);
    expect(subStepsOf({ nodeId: 'set' })).toEqual([]);
    expect(subStepsOf({ nodeId: 'odd', subSteps: 'many' } as never)).toEqual([]);
  });
});
