import type { Definition, NodeType, Position, StickyNote } from '../api-types';
import { addNode, edgeOutput, freshId, NODE_HEIGHT, NODE_WIDTH, outputsOf, type Fragment } from './workflow-graph';

/** Space kept between a new node and the others, in canvas units. */
const GAP = 24;

const overlaps = (a: Position, b: Position) => Math.abs(a.x - b.x) < NODE_WIDTH + GAP && Math.abs(a.y - b.y) < NODE_HEIGHT + GAP;

/**
 * The place nearest `at` (looking below it first, then in the next columns) where a node overlaps
 * none of `positions`: a new node never lands on another.
 */
export function clearSpot(at: Position, positions: Iterable<Position>): Position {
  const taken = [...positions];
  for (let column = 0; column < 50; column++) {
    for (let row = 0; row < 50; row++) {
      const spot = { x: Math.round(at.x + column * (NODE_WIDTH + 60)), y: Math.round(at.y + row * (NODE_HEIGHT + GAP)) };
      if (!taken.some((p) => overlaps(p, spot))) return spot;
    }
  }
  return at;
}

/**
 * Where a node added after `output` of `from` goes: right of it, level with that output (an IF's
 * `true` above, `false` below), and clear of the others.
 */
export function placeAfter(definition: Definition, positions: ReadonlyMap<string, Position>, from: string, output: string): Position {
  const node = definition.nodes.find((n) => n.id === from);
  const at = positions.get(from) ?? { x: 0, y: 0 };
  const outputs = node ? outputsOf(node, definition.edges) : ['main'];
  const index = Math.max(0, outputs.indexOf(output));
  const y = at.y + (index - (outputs.length - 1) / 2) * (NODE_HEIGHT + 60);
  return clearSpot({ x: at.x + NODE_WIDTH + 90, y }, positions.values());
}

/**
 * How far to move a fragment (pasted or duplicated) from `at` so that none of its nodes covers a
 * node of the workflow: its top left corner goes to `at`, then further down while anything overlaps.
 */
export function clearOffset(fragment: Fragment, at: Position, positions: ReadonlyMap<string, Position>): Position {
  const own = fragment.nodes.map((n) => n.position ?? { x: 0, y: 0 });
  const left = Math.min(...own.map((p) => p.x));
  const top = Math.min(...own.map((p) => p.y));
  const taken = [...positions.values()];
  for (let step = 0; step < 200; step++) {
    const offset = { x: Math.round(at.x - left), y: Math.round(at.y - top + step * (NODE_HEIGHT + GAP)) };
    if (!own.some((p) => taken.some((q) => overlaps(q, { x: p.x + offset.x, y: p.y + offset.y })))) return offset;
  }
  return { x: at.x - left, y: at.y - top };
}

/** Adds a node of `type` in the middle of edge `index`: the edge's source now feeds it, and it feeds the edge's target. */
export function insertOnEdge(
  definition: Definition,
  index: number,
  type: NodeType,
  positions: ReadonlyMap<string, Position>,
): { definition: Definition; id: string; at: Position } {
  const edges = definition.edges ?? [];
  const edge = edges[index];
  const from = definition.nodes.find((n) => n.id === edge.from);
  const a = positions.get(edge.from) ?? { x: 0, y: 0 };
  const b = positions.get(edge.to) ?? { x: a.x + 2 * NODE_WIDTH, y: a.y };
  const at = clearSpot({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 }, positions.values());
  const output = edgeOutput(edge, from, edges);
  const added = addNode({ ...definition, edges: edges.filter((_, i) => i !== index) }, type, at, { from: edge.from, output });
  // The new node's first output leads on to where the edge went.
  return {
    definition: { ...added.definition, edges: [...(added.definition.edges ?? []), { from: added.id, to: edge.to }] },
    id: added.id,
    at,
  };
}

/** Turns nodes off (or on again): a disabled node does not run and passes its input on. */
export function withDisabled(definition: Definition, ids: ReadonlySet<string>, disabled: boolean): Definition {
  return {
    ...definition,
    nodes: definition.nodes.map((n) => {
      if (!ids.has(n.id)) return n;
      const { disabled: _old, ...rest } = n;
      return disabled ? { ...rest, disabled: true } : rest;
    }),
  };
}

/** The node's display name: the id stays, so expressions that read `nodes.<id>` keep working. An empty name removes it. */
export function withName(definition: Definition, id: string, name: string): Definition {
  return {
    ...definition,
    nodes: definition.nodes.map((n) => {
      if (n.id !== id) return n;
      const { name: _old, ...rest } = n;
      return name ? { ...rest, name } : rest;
    }),
  };
}

export const NOTE_SIZE = { width: 240, height: 120 };

export function addNote(definition: Definition, at: Position): { definition: Definition; id: string } {
  const notes = definition.notes ?? [];
  const id = freshId('note', new Set(notes.map((n) => n.id)));
  const note: StickyNote = { id, text: '', position: { x: Math.round(at.x), y: Math.round(at.y) }, ...NOTE_SIZE };
  return { definition: { ...definition, notes: [...notes, note] }, id };
}

export function updateNote(definition: Definition, id: string, change: Partial<Omit<StickyNote, 'id'>>): Definition {
  return { ...definition, notes: (definition.notes ?? []).map((n) => (n.id === id ? { ...n, ...change } : n)) };
}

export function removeNote(definition: Definition, id: string): Definition {
  const notes = (definition.notes ?? []).filter((n) => n.id !== id);
  const { notes: _old, ...rest } = definition;
  return notes.length ? { ...rest, notes } : rest;
}
