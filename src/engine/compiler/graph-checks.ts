// The graph's half of compiling a definition: edges that name real nodes and outputs, loop bodies,
// one trigger, every node connected, and the execution order. Problems are collected, not thrown.
import type { RegisteredNode } from '../node-registry';
import type { WorkflowDefinition, WorkflowNodeSpec } from '../../domain/workflow-definition.model';
import type { DefinitionProblem, PreparedNode } from './compiled-plan';
import { ERROR_OUTPUT } from './failure-settings';

export interface Edge {
  from: string;
  to: string;
  output: string;
  index: number;
}

/** Edges that name existing nodes and outputs, each once; the others are problems. */
export function checkEdges(
  definition: WorkflowDefinition,
  indexById: Map<string, number>,
  prepared: Map<string, PreparedNode>,
  declared: Map<string, RegisteredNode | null>,
  problems: DefinitionProblem[],
): Edge[] {
  const edges: Edge[] = [];
  const seen = new Set<string>();
  definition.edges.forEach((edge, index) => {
    let dangling = false;
    for (const end of ['from', 'to'] as const) {
      if (!indexById.has(edge[end])) {
        problems.push({ field: `edges[${index}].${end}`, reason: `no node has the id "${edge[end]}"` });
        dangling = true;
      }
    }
    if (dangling) return;
    if (edge.from === edge.to) {
      problems.push({ field: `edges[${index}]`, reason: `node "${edge.from}" cannot feed itself`, nodeId: edge.from });
      return;
    }
    // A node with problems of its own still has its place in the graph, so the graph's problems are all reported too.
    const source = prepared.get(edge.from);
    const spec = definition.nodes[indexById.get(edge.from)!];
    const known = source?.outputs ?? staticOutputs(declared.get(edge.from) ?? null, spec.onError === 'errorOutput');
    const output = edge.output ?? known?.[0] ?? 'main';
    if (known && !known.includes(output)) {
      const hint = output === ERROR_OUTPUT ? ` (onError "errorOutput" sends its failures to an output "${ERROR_OUTPUT}")` : '';
      problems.push({
        field: `edges[${index}].output`,
        reason: `node "${edge.from}" has no output "${output}"; its outputs: ${known.join(', ')}${hint}`,
        nodeId: edge.from,
      });
      return;
    }
    const key = `${edge.from}\u0000${output}\u0000${edge.to}`;
    if (seen.has(key)) {
      problems.push({ field: `edges[${index}]`, reason: `duplicate edge ${edge.from}.${output} -> ${edge.to}` });
      return;
    }
    seen.add(key);
    edges.push({ from: edge.from, to: edge.to, output, index });
  });
  return edges;
}

/** Outputs a node declares whatever its parameters (and the error output it asks for); null when they depend on them. */
function staticOutputs(node: RegisteredNode | null, errorOutput: boolean): readonly string[] | null {
  if (!node) return null;
  const outputs = node.definition.outputs;
  const declared = outputs === undefined ? ['main'] : typeof outputs === 'function' ? null : outputs;
  return declared && errorOutput ? [...declared, ERROR_OUTPUT] : declared;
}

export interface LoopStructure {
  /** Edges from a loop's body back into the loop node. */
  backEdges: Set<Edge>;
  /** Body of each loop node: what its `loop` output reaches without passing through it again. */
  bodies: Map<string, Set<string>>;
  /** The innermost loop holding each node of a body. */
  innermost: Map<string, string>;
}

/**
 * A loop node's body is everything its `loop` output reaches without coming back to it; edges
 * from the body into the loop node are its back edges. Bodies must nest, and nothing may be both
 * in a body and after the loop.
 */
export function loopStructure(loops: string[], edges: Edge[], specs: WorkflowNodeSpec[], problems: DefinitionProblem[]): LoopStructure {
  const backEdges = new Set<Edge>();
  const bodies = new Map<string, Set<string>>();
  for (const loop of loops) {
    const body = reach(edges, loop, 'loop');
    const after = reach(edges, loop, 'done');
    bodies.set(loop, body);
    const both = [...body].filter((id) => after.has(id));
    if (both.length) {
      problems.push({
        field: 'edges',
        reason: `node(s) ${both.join(', ')} are reached both inside loop "${loop}" (its loop output) and after it (its done output)`,
        nodeId: loop,
      });
    }
    for (const edge of edges) if (edge.to === loop && body.has(edge.from)) backEdges.add(edge);
  }
  for (const [a, bodyA] of bodies) {
    for (const [b, bodyB] of bodies) {
      if (a >= b) continue;
      const aInB = bodyB.has(a);
      const bInA = bodyA.has(b);
      const overlap = [...bodyA].some((id) => bodyB.has(id));
      const nested = (aInB && !bInA && isSubset(bodyA, bodyB)) || (bInA && !aInB && isSubset(bodyB, bodyA));
      if ((overlap || aInB || bInA) && !nested) {
        problems.push({
          field: 'edges',
          reason: `loops "${a}" and "${b}" overlap: one loop's body must hold the other loop whole, or they must be apart`,
          nodeId: a,
        });
      }
    }
  }
  const innermost = new Map<string, string>();
  for (const spec of specs) {
    let best: string | undefined;
    for (const [loop, body] of bodies) {
      if (body.has(spec.id) && (best === undefined || body.size < bodies.get(best)!.size)) best = loop;
    }
    if (best !== undefined) innermost.set(spec.id, best);
  }
  return { backEdges, bodies, innermost };
}

/** Nodes reachable from `start`'s `output`, never passing through `start` again. */
function reach(edges: Edge[], start: string, output: string): Set<string> {
  const seen = new Set<string>();
  const queue = edges.filter((e) => e.from === start && e.output === output).map((e) => e.to);
  while (queue.length) {
    const id = queue.pop()!;
    if (id === start || seen.has(id)) continue;
    seen.add(id);
    for (const edge of edges) if (edge.from === id) queue.push(edge.to);
  }
  return seen;
}

const isSubset = (a: Set<string>, b: Set<string>): boolean => [...a].every((id) => b.has(id));

export function checkTriggersAndConnections(
  specs: WorkflowNodeSpec[],
  registered: (RegisteredNode | null)[],
  edges: Edge[],
  structure: LoopStructure,
  problems: DefinitionProblem[],
): void {
  const triggers = specs.filter((_, i) => registered[i]?.definition.trigger);
  if (triggers.length !== 1) {
    problems.push({
      field: 'nodes',
      reason: triggers.length
        ? `exactly one trigger node is allowed, found ${triggers.length}: ${triggers.map((t) => t.id).join(', ')}`
        : 'a workflow needs exactly one trigger node (e.g. webhook-trigger)',
    });
  }
  specs.forEach((spec, i) => {
    const isTrigger = Boolean(registered[i]?.definition.trigger);
    const incoming = edges.filter((e) => e.to === spec.id && !structure.backEdges.has(e)).length;
    if (isTrigger && incoming > 0) {
      problems.push({ field: `nodes[${i}]`, reason: 'a trigger node cannot have incoming edges', nodeId: spec.id });
    }
    if (isTrigger && structure.innermost.has(spec.id)) {
      problems.push({
        field: `nodes[${i}]`,
        reason: `a trigger node cannot be inside loop "${structure.innermost.get(spec.id)}"`,
        nodeId: spec.id,
      });
    }
    if (!isTrigger && incoming === 0 && registered[i]) {
      problems.push({
        field: `nodes[${i}]`,
        reason: 'not connected: every node except the trigger needs an incoming edge',
        nodeId: spec.id,
      });
    }
    if (isTrigger && spec.runMode === 'item') {
      problems.push({ field: `nodes[${i}].runMode`, reason: 'a trigger runs once per run: run mode must be "input"', nodeId: spec.id });
    }
  });
}

/**
 * Kahn's algorithm over the edges without back edges, taking ready nodes in definition order so
 * the order is stable. A node outside a loop that feeds a node of its body must come before the
 * loop node, since the body runs when the loop node's turn comes.
 */
export function executionOrder(
  specs: WorkflowNodeSpec[],
  edges: Edge[],
  structure: LoopStructure,
  problems: DefinitionProblem[],
): string[] {
  const dependencies = new Map<string, Set<string>>(specs.map((s) => [s.id, new Set<string>()]));
  for (const edge of edges) {
    if (structure.backEdges.has(edge)) continue;
    dependencies.get(edge.to)?.add(edge.from);
    for (const [loop, body] of structure.bodies) {
      if (body.has(edge.to) && !body.has(edge.from) && edge.from !== loop) dependencies.get(loop)?.add(edge.from);
    }
  }
  const remaining = new Map([...dependencies].map(([id, deps]) => [id, deps.size]));
  const dependents = new Map<string, string[]>(specs.map((s) => [s.id, []]));
  for (const [id, deps] of dependencies) for (const dep of deps) dependents.get(dep)?.push(id);
  const order: string[] = [];
  while (order.length < remaining.size) {
    const ready = specs.find((s) => remaining.get(s.id) === 0);
    if (!ready) break;
    remaining.set(ready.id, -1);
    order.push(ready.id);
    for (const next of dependents.get(ready.id) ?? []) remaining.set(next, remaining.get(next)! - 1);
  }
  if (order.length < remaining.size) {
    const stuck = new Set([...remaining].filter(([, n]) => n > 0).map(([id]) => id));
    const cycle = findCycle(stuck, dependents);
    problems.push({
      field: 'edges',
      reason: `the edges form a cycle: ${cycle.join(' -> ')} (only a loop node's body may lead back to it)`,
      nodeId: cycle[0],
    });
  }
  return order;
}

/** Depth-first search among the nodes Kahn's algorithm could not order; they hold at least one cycle. */
function findCycle(stuck: Set<string>, successors: Map<string, string[]>): string[] {
  const finished = new Set<string>();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    path.push(id);
    for (const next of successors.get(id) ?? []) {
      if (!stuck.has(next) || finished.has(next)) continue;
      const at = path.indexOf(next);
      if (at !== -1) return [...path.slice(at), next];
      const found = visit(next);
      if (found) return found;
    }
    path.pop();
    finished.add(id);
    return null;
  };
  for (const id of stuck) {
    const found = finished.has(id) ? null : visit(id);
    if (found) return found;
  }
  return [...stuck];
}
