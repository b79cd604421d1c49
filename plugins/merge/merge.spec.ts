import { NodeConfigurationError, NodeInput } from 'workflow-collection-service/sdk';
import { inputContext } from 'workflow-collection-service/sdk/testing';
import merge, { MergeParameters } from './index';

const edge = (from: string, data: unknown, live = true): NodeInput => ({ from, output: 'main', live, data: live ? data : undefined });
const run = (params: Partial<MergeParameters>, inputs: NodeInput[]) =>
  merge.execute(
    inputContext(Object.assign(new MergeParameters(), params), { inputs, input: inputs.filter((i) => i.live).map((i) => i.data) }),
  );

const customers = [
  { id: 1, name: 'Ada' },
  { id: 2, name: 'Bob' },
  { id: 3, name: 'Cy' },
];
const orders = [
  { id: 2, total: 20 },
  { id: 1, total: 10 },
  { id: 9, total: 90 },
];

describe('merge node', () => {
  it('appends every input in edge order, a non-array as one item, a dead input as nothing', () => {
    expect(run({ mode: 'append' }, [edge('a', [1, 2]), edge('b', { x: 1 }), edge('c', null, false), edge('d', [3])])).toEqual([
      1,
      2,
      { x: 1 },
      3,
    ]);
  });

  it('joins by key: inner, left and outer', () => {
    const inputs = [edge('customers', customers), edge('orders', orders)];
    expect(run({ mode: 'byKey', key: 'id' }, inputs)).toEqual([
      { id: 1, name: 'Ada', total: 10 },
      { id: 2, name: 'Bob', total: 20 },
    ]);
    expect(run({ mode: 'byKey', key: 'id', join: 'left' }, inputs)).toHaveLength(3);
    expect(run({ mode: 'byKey', key: 'id', join: 'outer' }, inputs)).toEqual(
      expect.arrayContaining([
        { id: 9, total: 90 },
        { id: 3, name: 'Cy' },
      ]),
    );
    expect(run({ mode: 'byKey', key: 'id', join: 'outer' }, inputs)).toHaveLength(4);
  });

  it('matches on a dotted path, keeps 1 and "1" apart, and treats a dead input as empty', () => {
    const left = [
      { customer: { id: 1 }, a: true },
      { customer: { id: '1' }, a: false },
    ];
    const right = [{ customer: { id: 1 }, b: true }];
    expect(run({ mode: 'byKey', key: 'customer.id' }, [edge('l', left), edge('r', right)])).toEqual([
      { customer: { id: 1 }, a: true, b: true },
    ]);
    expect(run({ mode: 'byKey', key: 'id', join: 'left' }, [edge('l', customers), edge('r', null, false)])).toEqual(customers);
  });

  it('merges by position, to the shortest or the longest input', () => {
    const inputs = [edge('a', [{ a: 1 }, { a: 2 }]), edge('b', [{ b: 1 }])];
    expect(run({ mode: 'byPosition' }, inputs)).toEqual([{ a: 1, b: 1 }]);
    expect(run({ mode: 'byPosition', join: 'longest' }, inputs)).toEqual([{ a: 1, b: 1 }, { a: 2 }]);
  });

  it('says what is wrong with a key merge of non-objects or without a key', () => {
    expect(() => run({ mode: 'byKey', key: 'id' }, [edge('a', [1])])).toThrow(NodeConfigurationError);
    expect(() => run({ mode: 'byKey' }, [edge('a', [])])).toThrow(/needs the key/);
    expect(() => run({ mode: 'byPosition', join: 'inner' }, [edge('a', [])])).toThrow(/shortest or longest/);
  });
});
