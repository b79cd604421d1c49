import type { Definition, NodeType } from '../api-types';
import {
  connect,
  fragmentOf,
  freshId,
  itemCount,
  layoutAll,
  outputsOf,
  outputValue,
  paste,
  placeProblem,
  positionsOf,
  removeNodes,
  renameNode,
  withPinned,
} from './workflow-graph';

const type = (name: string, trigger = false): NodeType => ({
  type: name,
  version: 1,
  displayName: name,
  description: '',
  trigger,
  defaultRunMode: 'item',
  parameters: { type: 'object', properties: {} },
});
const TYPES = [type('webhook-trigger', true), type('if'), type('set'), type('merge')];

const routed: Definition = {
  nodes: [
    { id: 'orders', type: 'webhook-trigger', parameters: {} },
    { id: 'big', type: 'if', parameters: {} },
    { id: 'review', type: 'set', parameters: {} },
    { id: 'auto', type: 'set', parameters: {} },
    { id: 'all', type: 'merge', parameters: {} },
  ],
  edges: [
    { from: 'orders', to: 'big' },
    { from: 'big', output: 'false', to: 'auto' },
    { from: 'big', output: 'true', to: 'review' },
    { from: 'review', to: 'all' },
    { from: 'auto', to: 'all' },
  ],
};

describe('workflow graph (the canvas model)', () => {
  it('knows the outputs of the multi-output nodes, a switch from its cases, and any output an edge names', () => {
    expect(outputsOf({ id: 'a', type: 'if' })).toEqual(['true', 'false']);
    expect(outputsOf({ id: 's', type: 'switch', parameters: { cases: ['red', 'blue'] } })).toEqual(['red', 'blue', 'fallback']);
    expect(outputsOf({ id: 'p', type: 'plugin-x' }, [{ from: 'p', output: 'odd', to: 'q' }])).toEqual(['main', 'odd']);
    // onError errorOutput adds the error port the server adds.
    expect(outputsOf({ id: 'a', type: 'if', onError: 'errorOutput' })).toEqual(['true', 'false', 'error']);
    expect(outputsOf({ id: 'h', type: 'http-request', onError: 'errorOutput' })).toEqual(['main', 'error']);
  });

  it('pins and unpins data, and keeps it on the nodes a rename or removal leaves', () => {
    const pinned = withPinned(withPinned(routed, 'big', [{ total: 1 }]), 'review', { a: 1 });
    expect(pinned.pinnedData).toEqual({ big: [{ total: 1 }], review: { a: 1 } });
    expect(renameNode(pinned, 'big', 'large').pinnedData).toEqual({ large: [{ total: 1 }], review: { a: 1 } });
    expect(removeNodes(pinned, new Set(['review'])).pinnedData).toEqual({ big: [{ total: 1 }] });
    expect('pinnedData' in removeNodes(pinned, new Set(['review', 'big']))).toBe(false);
    expect('pinnedData' in withPinned(withPinned(pinned, 'big', undefined), 'review', undefined)).toBe(false);
  });

  it("lays out left to right, an IF's true branch above its false one, and keeps saved positions", () => {
    const at = layoutAll(routed);
    expect(at.get('orders')!.x).toBeLessThan(at.get('big')!.x);
    expect(at.get('big')!.x).toBeLessThan(at.get('review')!.x);
    expect(at.get('review')!.y).toBeLessThan(at.get('auto')!.y);
    const placed = positionsOf({ ...routed, nodes: routed.nodes.map((n) => (n.id === 'all' ? { ...n, position: { x: 999, y: -5 } } : n)) });
    expect(placed.get('all')).toEqual({ x: 999, y: -5 });
    expect(placed.size).toBe(5);
  });

  it('connects an output to a node once, never into a trigger or into itself', () => {
    const next = connect(routed, 'auto', 'main', 'review', TYPES);
    expect(typeof next).toBe('object');
    expect((next as Definition).edges!.at(-1)).toEqual({ from: 'auto', to: 'review' });
    expect(connect(routed, 'big', 'true', 'review', TYPES)).toMatch(/already leads/);
    expect(connect(routed, 'big', 'true', 'orders', TYPES)).toMatch(/trigger/);
    expect(connect(routed, 'big', 'true', 'big', TYPES)).toMatch(/itself/);
    expect((connect(routed, 'big', 'true', 'all', TYPES) as Definition).edges!.at(-1)).toEqual({ from: 'big', output: 'true', to: 'all' });
  });

  it('removes nodes with their edges, and renames a node in its edges', () => {
    expect(removeNodes(routed, new Set(['big'])).edges).toEqual([
      { from: 'review', to: 'all' },
      { from: 'auto', to: 'all' },
    ]);
    const renamed = renameNode(routed, 'big', 'large');
    expect(renamed.edges!.filter((e) => e.from === 'large' || e.to === 'large')).toHaveLength(3);
  });

  it('pastes a copy with fresh ids and its inner edges, leaving out a second trigger', () => {
    const positions = positionsOf(routed);
    const fragment = fragmentOf(routed, new Set(['orders', 'big', 'review']), positions);
    const result = paste(routed, JSON.parse(JSON.stringify(fragment)), { x: 10, y: 10 }, TYPES);
    expect(result.ids).toEqual(['big_2', 'review_2']);
    expect(result.definition.edges!.slice(-1)).toEqual([{ from: 'big_2', output: 'true', to: 'review_2' }]);
    expect(result.definition.nodes.find((n) => n.id === 'big_2')!.position).toEqual({
      x: positions.get('big')!.x + 10,
      y: positions.get('big')!.y + 10,
    });
    expect(freshId('set_2', new Set(['set', 'set_2']))).toBe('set_3');
    expect(freshId('http-request', new Set())).toBe('http_request');
  });

  it("places the server's problems on their node, by id or by index in what was sent", () => {
    expect(placeProblem({ field: 'nodes[1].parameters.condition', reason: 'syntax', nodeId: 'big' }, null)).toEqual({
      nodeId: 'big',
      field: 'parameters.condition',
    });
    expect(placeProblem({ field: 'definition.nodes[2].position.x', reason: 'number' }, routed)).toEqual({
      nodeId: 'review',
      field: 'position.x',
    });
    expect(placeProblem({ field: 'edges[1].output', reason: 'no such output' }, routed)).toMatchObject({ nodeId: 'auto', edgeIndex: 1 });
    expect(placeProblem({ field: 'nodes', reason: 'needs a trigger' }, routed)).toEqual({ nodeId: undefined, field: 'nodes' });
  });

  it('counts the items of a recorded output, per output of a routed node', () => {
    expect(itemCount([1, 2, 3])).toBe(3);
    expect(itemCount({ a: 1 })).toBe(1);
    expect(itemCount(null)).toBe(0);
    expect(itemCount({ notRecorded: true, reason: 'too big' })).toBeNull();
    expect(outputValue({ true: [1], false: [] }, 'false', ['true', 'false'])).toEqual([]);
    expect(outputValue([1], 'main', ['main'])).toEqual([1]);
  });
});
