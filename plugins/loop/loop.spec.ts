import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { isRoutedOutput } from 'workflow-collection-service/sdk';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import loop, { collected, LoopParameters } from './index';

const params = (values: Partial<LoopParameters> = {}) => Object.assign(new LoopParameters(), values);
const step = (p: LoopParameters, input: unknown, iteration: number, results: unknown[] = []) => {
  const out = loop.execute(inputContext(p, { input, loop: { iteration, results } }));
  if (!isRoutedOutput(out)) throw new Error('a loop always routes');
  return out.outputs;
};

describe('loop node', () => {
  it('splits the input into batches, one per iteration, then hands over what the body gave back', () => {
    const p = params({ mode: 'items', batchSize: 2 });
    const items = [1, 2, 3, 4, 5];
    expect(step(p, items, 0)).toEqual({ loop: [1, 2] });
    expect(step(p, items, 1, [['a']])).toEqual({ loop: [3, 4] });
    expect(step(p, items, 2, [['a'], ['b']])).toEqual({ loop: [5] });
    expect(step(p, items, 3, [['a'], ['b'], ['c']])).toEqual({ done: ['a', 'b', 'c'] });
  });

  it('treats a single value as a batch of one, and nothing as no batch at all', () => {
    expect(step(params(), { id: 1 }, 0)).toEqual({ loop: [{ id: 1 }] });
    expect(step(params(), null, 0)).toEqual({ done: [] });
  });

  it('repeats until an iteration gives back nothing, passing the previous result on', () => {
    const p = params({ mode: 'repeat' });
    expect(step(p, null, 0)).toEqual({ loop: { iteration: 0, previous: null } });
    expect(step(p, null, 1, [[1, 2]])).toEqual({ loop: { iteration: 1, previous: [1, 2] } });
    expect(step(p, null, 2, [[1, 2], []])).toEqual({ done: [1, 2] });
  });

  it('stops repeating at maxIterations or when continueWhile turns false', () => {
    expect(step(params({ mode: 'repeat', maxIterations: 2 }), null, 2, [[1], [2]])).toEqual({ done: [1, 2] });
    expect(step(params({ mode: 'repeat', continueWhile: false }), null, 0)).toEqual({ done: [] });
    expect(step(params({ mode: 'repeat', stopWhenEmpty: false }), null, 1, [[]])).toEqual({ loop: { iteration: 1, previous: [] } });
  });

  it('concatenates array results and keeps other results one per iteration', () => {
    expect(collected([[1], [2, 3]])).toEqual([1, 2, 3]);
    expect(collected([{ a: 1 }, null, { a: 2 }])).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('declares the loop and done outputs', () => {
    expect(loop.loop).toBe(true);
    expect(loop.outputs).toEqual(['loop', 'done']);
  });

  it('refuses a batch size or iteration count out of range', () => {
    const errors = validateSync(plainToInstance(LoopParameters, { mode: 'forever', batchSize: 0, maxIterations: 10_001 }));
    expect(errors.map((e) => e.property).sort()).toEqual(['batchSize', 'maxIterations', 'mode']);
  });
});
