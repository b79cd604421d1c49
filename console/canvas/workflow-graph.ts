import dagre from '@dagrejs/dagre';
import type { Definition, Edge, FieldProblem, NodeSpec, NodeType, Position } from '../api-types';
import { isObject } from '../json-schema';

/** The size a node is drawn at, in canvas units: the layout spaces nodes by it. */
export const NODE_WIDTH = 190;
export const NODE_HEIGHT = 60;

/**
 * Outputs of the built-in nodes that have more than one. The node-types endpoint does not say
 * which outputs a type has (the SDK's `outputs` stays on the server), so the console keeps this
 * short table; any other output an edge names is drawn too, and every other type has one.
 */
const MULTI_OUTPUTS: Record<string, (parameters: Record<string, unknown>) => string[]> = {
  if: () => ['true', 'false'],
  filter: () => ['kept', 'discarded'],
  loop: () => ['loop', 'done'],
  switch: (parameters) => [
    ...(Array.isArray(parameters.cases) ? parameters.cases.filter((c): c is string => typeof c === 'string') : []),
    'fallback',
  ],
};

/** The output a node with onError `errorOutput` sends its failed items to (the server's ERROR_OUTPUT). */
export const ERROR_OUTPUT = 'error';

/** The outputs of `node` in order, the first being the one an edge without `output` takes. */
export function outputsOf(node: NodeSpec, edges: readonly Edge[] = []): string[] {
  const own = MULTI_OUTPUTS[node.type]?.(node.parameters ?? {}) ?? ['main'];
  const known = node.onError === 'errorOutput' && !own.includes(ERROR_OUTPUT) ? [...own, ERROR_OUTPUT] : own;
  const named = edges.filter((e) => e.from === node.id && e.output !== undefined).map((e) => e.output!);
  return [...new Set([...known, ...named])];
}

/** The output an edge takes: its own, or its node's first. */
export const edgeOutput = (edge: Edge, from: NodeSpec | undefined, edges: readonly Edge[]): string =>
  edge.output ?? (from ? outputsOf(from, edges)[0] : 'main');

export type Kind = 'Triggers' | 'Flow' | 'Data' | 'Collections' | 'AI' | 'Plugins';
export const KINDS: readonly Kind[] = ['Triggers', 'Flow', 'Data', 'Collections', 'AI', 'Plugins'];

/** The catalogue's groups for the types that ship with the service; types from PLUGIN_PATHS are Plugins. */
const KIND_OF: Record<string, Kind> = {
  // Triggers whose `trigger` the node-types endpoint reports as false (it only says true for webhook-trigger's plain `true`).
  'schedule-trigger': 'Triggers',
  'mcp-trigger': 'Triggers',
  if: 'Flow',
  switch: 'Flow',
  filter: 'Flow',
  merge: 'Flow',
  loop: 'Flow',
  wait: 'Flow',
  'execute-workflow': 'Flow',
  respond: 'Flow',
  'stop-and-error': 'Flow',
  set: 'Data',
  code: 'Data',
  'http-request': 'Data',
  'list-files': 'Collections',
  'get-file-contents': 'Collections',
  'search-collection': 'Collections',
  'add-file': 'Collections',
  'chat-completion': 'AI',
};

export const kindOf = (type: NodeType): Kind => (type.trigger ? 'Triggers' : (KIND_OF[type.type] ?? 'Plugins'));

/** A node id not yet taken, from the type's name: `set`, `set_2`, ... (ids are read in expressions as nodes.<id>). */
export function freshId(stem: string, taken: ReadonlySet<string>): string {
  const base =
    stem
      .replace(/[^A-Za-z0-9_]/g, '_')
      .replace(/^([^A-Za-z_])/, '_$1')
      .slice(0, 60) || 'node';
  if (!taken.has(base)) return base;
  // A copy of set_2 is set_3, not set_2_2.
  const root = base.replace(/_\d+$/, '') || base;
  let id = root;
  for (let i = 2; taken.has(id); i++) id = `${root}_${i}`;
  return id;
}

const ids = (definition: Definition) => new Set(definition.nodes.map((n) => n.id));

/**
 * Where each node is drawn: its saved position, else one from the automatic layout (left to
 * right along the edges). Nodes placed by the layout keep their place relative to saved ones only
 * roughly; `layoutAll` re-arranges everything.
 */
export function positionsOf(definition: Definition): Map<string, Position> {
  const placed = new Map<string, Position>();
  const missing = definition.nodes.filter((n) => !isPosition(n.position));
  for (const node of definition.nodes) if (isPosition(node.position)) placed.set(node.id, node.position);
  if (missing.length === 0) return placed;
  const auto = layoutAll(definition);
  // Unplaced nodes go where the layout puts them, shifted below what the user placed.
  const below = placed.size ? Math.max(...[...placed.values()].map((p) => p.y)) + NODE_HEIGHT * 2 : 0;
  const top = Math.min(...missing.map((n) => auto.get(n.id)!.y));
  for (const node of missing) {
    const p = auto.get(node.id)!;
    placed.set(node.id, placed.size && missing.length < definition.nodes.length ? { x: p.x, y: p.y - top + below } : p);
  }
  return placed;
}

/** Every node placed by the layout (dagre), left to right. */
export function layoutAll(definition: Definition): Map<string, Position> {
  const graph = new dagre.graphlib.Graph({ multigraph: true });
  graph.setGraph({ rankdir: 'LR', nodesep: 36, ranksep: 70, marginx: 20, marginy: 20 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of definition.nodes) graph.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  (definition.edges ?? []).forEach((edge, i) => {
    if (graph.hasNode(edge.from) && graph.hasNode(edge.to) && edge.from !== edge.to) graph.setEdge(edge.from, edge.to, {}, String(i));
  });
  dagre.layout(graph);
  const result = new Map<string, Position>();
  for (const node of definition.nodes) {
    const p = graph.node(node.id);
    result.set(node.id, { x: Math.round(p.x - NODE_WIDTH / 2), y: Math.round(p.y - NODE_HEIGHT / 2) });
  }
  orderByOutput(definition, result);
  return result;
}

/**
 * dagre does not know ports: the nodes an IF's `true` and `false` lead to may come out upside
 * down, so edges cross. Nodes fed only by one multi-output node, side by side in a column, are
 * put in the order of its outputs.
 */
function orderByOutput(definition: Definition, positions: Map<string, Position>): void {
  const edges = definition.edges ?? [];
  const incoming = new Map<string, number>();
  for (const e of edges) incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
  for (const node of definition.nodes) {
    const outputs = outputsOf(node, edges);
    if (outputs.length < 2) continue;
    const targets = edges
      .filter((e) => e.from === node.id && incoming.get(e.to) === 1 && e.to !== node.id)
      .map((e) => ({ id: e.to, rank: outputs.indexOf(edgeOutput(e, node, edges)) }));
    const column = targets.filter((t) => positions.get(t.id)?.x === positions.get(targets[0]?.id)?.x);
    if (column.length < 2) continue;
    const ys = column.map((t) => positions.get(t.id)!.y).sort((a, b) => a - b);
    [...column].sort((a, b) => a.rank - b.rank).forEach((t, i) => positions.set(t.id, { ...positions.get(t.id)!, y: ys[i] }));
  }
}

export const isPosition = (value: unknown): value is Position =>
  isObject(value) && typeof value.x === 'number' && Number.isFinite(value.x) && typeof value.y === 'number' && Number.isFinite(value.y);

/** Each node with the position it is drawn at, saved into the definition. */
export function withPositions(definition: Definition, positions: ReadonlyMap<string, Position>): Definition {
  return {
    ...definition,
    nodes: definition.nodes.map((n) => {
      const p = positions.get(n.id);
      return p ? { ...n, position: { x: Math.round(p.x), y: Math.round(p.y) } } : n;
    }),
  };
}

export function addNode(
  definition: Definition,
  type: NodeType,
  at: Position,
  after?: { from: string; output?: string },
): { definition: Definition; id: string } {
  const id = freshId(type.type, ids(definition));
  const node: NodeSpec = { id, type: type.type, parameters: {}, position: { x: Math.round(at.x), y: Math.round(at.y) } };
  const edges = [...(definition.edges ?? [])];
  if (after && !type.trigger && definition.nodes.some((n) => n.id === after.from)) edges.push(edgeOf(after.from, after.output, id));
  return { definition: { ...definition, nodes: [...definition.nodes, node], edges }, id };
}

const edgeOf = (from: string, output: string | undefined, to: string): Edge =>
  output === undefined || output === 'main' ? { from, to } : { from, output, to };

/**
 * Connects an output to a node's input. Refused, with the reason, when the edge would feed a
 * node itself, lead into a trigger or already exists.
 */
export function connect(definition: Definition, from: string, output: string, to: string, types: readonly NodeType[]): Definition | string {
  if (from === to) return 'A node cannot feed itself.';
  const target = definition.nodes.find((n) => n.id === to);
  const source = definition.nodes.find((n) => n.id === from);
  if (!target || !source) return 'Both ends must be nodes of the workflow.';
  if (types.find((t) => t.type === target.type)?.trigger) return `${to} is a trigger: nothing leads into a trigger.`;
  const edges = definition.edges ?? [];
  const first = outputsOf(source, edges)[0];
  const exists = edges.some((e) => e.from === from && e.to === to && (e.output ?? first) === output);
  if (exists) return `${from} (${output}) already leads to ${to}.`;
  return { ...definition, edges: [...edges, edgeOf(from, output === first && output === 'main' ? undefined : output, to)] };
}

export function removeEdge(definition: Definition, index: number): Definition {
  return { ...definition, edges: (definition.edges ?? []).filter((_, i) => i !== index) };
}

/** The pinned data renamed by `rename`, without the nodes it drops (null) (the server refuses data pinned on no node); the key left out when none is left. */
function prunePinned(definition: Definition, rename: (id: string) => string | null): Definition {
  if (!definition.pinnedData) return definition;
  const { pinnedData, ...rest } = definition;
  const kept = Object.entries(pinnedData).flatMap(([id, value]) => {
    const to = rename(id);
    return to === null ? [] : [[to, value] as const];
  });
  return kept.length ? { ...rest, pinnedData: Object.fromEntries(kept) } : rest;
}

/** Pins `value` as the node's input for node tests (undefined unpins it). */
export function withPinned(definition: Definition, nodeId: string, value: unknown): Definition {
  const pinned = { ...(definition.pinnedData ?? {}) };
  if (value === undefined) delete pinned[nodeId];
  else pinned[nodeId] = value;
  const { pinnedData: _old, ...rest } = definition;
  return Object.keys(pinned).length ? { ...rest, pinnedData: pinned } : rest;
}

export function removeNodes(definition: Definition, remove: ReadonlySet<string>): Definition {
  return {
    ...prunePinned(definition, (id) => (remove.has(id) ? null : id)),
    nodes: definition.nodes.filter((n) => !remove.has(n.id)),
    edges: (definition.edges ?? []).filter((e) => !remove.has(e.from) && !remove.has(e.to)),
  };
}

/** Renames a node and the edges that name it; expressions that read `nodes.<old id>` are the user's to update. */
export function renameNode(definition: Definition, from: string, to: string): Definition {
  const rename = (id: string) => (id === from ? to : id);
  return {
    ...prunePinned(definition, rename),
    nodes: definition.nodes.map((n) => (n.id === from ? { ...n, id: to } : n)),
    edges: (definition.edges ?? []).map((e) => ({ ...e, from: rename(e.from), to: rename(e.to) })),
  };
}

/** What the clipboard carries: nodes and the edges between them, as JSON any workflow can take. */
export interface Fragment {
  kind: 'workflow-fragment';
  nodes: NodeSpec[];
  edges: Edge[];
}

export function fragmentOf(definition: Definition, selected: ReadonlySet<string>, positions: ReadonlyMap<string, Position>): Fragment {
  return {
    kind: 'workflow-fragment',
    nodes: definition.nodes.filter((n) => selected.has(n.id)).map((n) => ({ ...n, position: positions.get(n.id) ?? n.position })),
    edges: (definition.edges ?? []).filter((e) => selected.has(e.from) && selected.has(e.to)),
  };
}

/** A fragment read back from clipboard text; null when the text is not one. */
export function parseFragment(text: string): Fragment | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  // A whole definition pastes as well as a fragment.
  if (!isObject(value) || !Array.isArray(value.nodes)) return null;
  const nodes = value.nodes.filter((n): n is NodeSpec => isObject(n) && typeof n.id === 'string' && typeof n.type === 'string');
  const edges = (Array.isArray(value.edges) ? value.edges : []).filter(
    (e): e is Edge => isObject(e) && typeof e.from === 'string' && typeof e.to === 'string',
  );
  return nodes.length ? { kind: 'workflow-fragment', nodes, edges } : null;
}

/**
 * Adds a copy of `fragment` to the definition, `offset` away from where it was: ids that are
 * taken get a fresh one (the copied edges follow), and triggers are left out when the workflow
 * has one, since a workflow has exactly one.
 */
export function paste(
  definition: Definition,
  fragment: Fragment,
  offset: Position,
  types: readonly NodeType[],
): { definition: Definition; ids: string[] } {
  const taken = ids(definition);
  const hasTrigger = definition.nodes.some((n) => types.find((t) => t.type === n.type)?.trigger);
  const renamed = new Map<string, string>();
  const nodes: NodeSpec[] = [];
  for (const node of fragment.nodes) {
    if (hasTrigger && types.find((t) => t.type === node.type)?.trigger) continue;
    const id = freshId(node.id, taken);
    taken.add(id);
    renamed.set(node.id, id);
    const at = isPosition(node.position) ? node.position : { x: 0, y: 0 };
    nodes.push({ ...structuredClone(node), id, position: { x: Math.round(at.x + offset.x), y: Math.round(at.y + offset.y) } });
  }
  const edges = fragment.edges
    .filter((e) => renamed.has(e.from) && renamed.has(e.to))
    .map((e) => ({ ...e, from: renamed.get(e.from)!, to: renamed.get(e.to)! }));
  return {
    definition: { ...definition, nodes: [...definition.nodes, ...nodes], edges: [...(definition.edges ?? []), ...edges] },
    ids: [...renamed.values()],
  };
}

/** Where a problem the server or the console's check names sits: a node (and a field in it), an edge, or the workflow. */
export interface ProblemPlace {
  nodeId?: string;
  /** The field within its node (`parameters.url`), or within the definition when no node is named. */
  field: string;
  edgeIndex?: number;
}

const NODE_FIELD = /^(?:definition\.)?nodes\[(\d+)\]\.?(.*)$/;
const EDGE_FIELD = /^(?:definition\.)?edges\[(\d+)\]/;

/**
 * Places a validation problem on the canvas. The server names a node two ways: definition rules
 * give `nodes[1].parameters.url` with the node's id, the request's own checks
 * `definition.nodes[1].position.x` without it: the index then finds the node in what was sent.
 */
export function placeProblem(problem: FieldProblem, sent: Definition | null): ProblemPlace {
  const node = NODE_FIELD.exec(problem.field);
  if (node) {
    const nodeId = problem.nodeId ?? sent?.nodes[Number(node[1])]?.id;
    return { nodeId, field: node[2] };
  }
  const edge = EDGE_FIELD.exec(problem.field);
  if (edge) {
    const index = Number(edge[1]);
    return { nodeId: problem.nodeId ?? sent?.edges?.[index]?.to, field: problem.field.replace(/^definition\./, ''), edgeIndex: index };
  }
  return { nodeId: problem.nodeId, field: problem.field.replace(/^definition\./, '') };
}

/** How many items a recorded output holds: an array's length, 1 for any other value, 0 for none; null when it was not recorded. */
export function itemCount(value: unknown): number | null {
  if (value === undefined || value === null) return 0;
  if (isObject(value) && value.notRecorded === true) return null;
  return Array.isArray(value) ? value.length : 1;
}

/** What went out of one output of a step: a node with several outputs records them by name. */
export function outputValue(output: unknown, port: string, outputs: readonly string[]): unknown {
  if (outputs.length > 1) return isObject(output) ? output[port] : undefined;
  return output;
}

/** Each node as the canvas draws it: its name (else its id), its type's name, icon and outputs, and whether it is disabled. */
export function drawNodes(
  definition: Definition,
  types: readonly NodeType[],
): { id: string; title: string; subtitle: string; type: string; kind: Kind; outputs: string[]; trigger: boolean; disabled: boolean }[] {
  const edges = definition.edges ?? [];
  return definition.nodes.map((node) => {
    const type =
      types.find((t) => t.type === node.type && (node.version === undefined || t.version === node.version)) ??
      types.find((t) => t.type === node.type);
    return {
      id: node.id,
      title: node.name || node.id,
      subtitle: type ? `${type.displayName}${node.name ? ` · ${node.id}` : ''}` : `${node.type} (unknown type)`,
      type: node.type,
      kind: type ? kindOf(type) : 'Plugins',
      outputs: outputsOf(node, edges),
      trigger: type?.trigger ?? false,
      disabled: node.disabled === true,
    };
  });
}

/** The definition's nodes that are objects with an id and a type: the JSON tab may hold anything. */
export function drawable(value: unknown): Definition | null {
  if (!isObject(value) || !Array.isArray(value.nodes)) return null;
  const nodes = value.nodes.filter((n): n is NodeSpec => isObject(n) && typeof n.id === 'string' && typeof n.type === 'string');
  const edges = (Array.isArray(value.edges) ? value.edges : []).filter(
    (e): e is Edge => isObject(e) && typeof e.from === 'string' && typeof e.to === 'string',
  );
  return { ...(value as unknown as Definition), nodes, edges };
}
