import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AppError, ErrorCode, FieldError } from '../common/app-error';
import { fieldErrors } from '../common/validation';
import type { RunMode } from '../sdk';
import { NodeRegistry, RegisteredNode } from './node-registry';
import { ParameterType } from './parameter-schema';
import { WorkflowDefinition, WorkflowNodeSpec } from './workflow-definition';

/** A problem of a definition; `nodeId` says which node, when it is about one. */
export interface DefinitionProblem extends FieldError {
  nodeId?: string;
}

/** A parameter evaluated for each execution; `type` says how to coerce its result. */
export interface ExpressionParameter {
  name: string;
  source: string;
  type: ParameterType;
}

export interface CompiledNode {
  readonly id: string;
  /** Index in the execution order. */
  readonly position: number;
  readonly spec: WorkflowNodeSpec;
  readonly node: RegisteredNode;
  readonly runMode: RunMode;
  readonly continueOnError: boolean;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly timeoutMs: number | null;
  /** Ids of the nodes whose output is this node's input, in definition order. */
  readonly predecessors: readonly string[];
  readonly fixed: Readonly<Record<string, unknown>>;
  readonly expressions: readonly ExpressionParameter[];
  /** Validated and frozen once when no parameter is an expression, shared by every run. */
  readonly staticParams: object | null;
}

/** A definition checked against the loaded node types, in execution order. Immutable, so cacheable. */
export interface CompiledWorkflow {
  readonly nodes: readonly CompiledNode[];
  readonly trigger: CompiledNode;
}

export const DEFAULT_BACKOFF_MS = 1000;

/**
 * Checks everything the shape validation of the DTO cannot: node types and versions, parameters,
 * the graph (dangling edges, cycles, one trigger, everything reachable from it), and returns the
 * execution plan. Every problem is collected, so one 400 lists them all.
 *
 * @throws AppError VALIDATION_FAILED with `details.fields` of DefinitionProblem
 */
export function compileWorkflow(definition: WorkflowDefinition, registry: NodeRegistry): CompiledWorkflow {
  const problems: DefinitionProblem[] = [];
  const specs = definition.nodes;
  const indexById = new Map<string, number>();
  specs.forEach((spec, i) => {
    if (indexById.has(spec.id)) problems.push({ field: `nodes[${i}].id`, reason: `duplicate node id "${spec.id}"`, nodeId: spec.id });
    else indexById.set(spec.id, i);
  });

  const registered = specs.map((spec, i) => resolveType(spec, i, registry, problems));
  const predecessors = new Map<string, string[]>(specs.map((s) => [s.id, []]));
  const successors = new Map<string, string[]>(specs.map((s) => [s.id, []]));
  const seenEdges = new Set<string>();
  definition.edges.forEach((edge, i) => {
    let dangling = false;
    for (const end of ['from', 'to'] as const) {
      if (!indexById.has(edge[end])) {
        problems.push({ field: `edges[${i}].${end}`, reason: `no node has the id "${edge[end]}"` });
        dangling = true;
      }
    }
    if (dangling) return;
    if (edge.from === edge.to) {
      problems.push({ field: `edges[${i}]`, reason: `node "${edge.from}" cannot feed itself`, nodeId: edge.from });
      return;
    }
    const key = `${edge.from}\u0000${edge.to}`;
    if (seenEdges.has(key)) {
      problems.push({ field: `edges[${i}]`, reason: `duplicate edge ${edge.from} -> ${edge.to}` });
      return;
    }
    seenEdges.add(key);
    predecessors.get(edge.to)!.push(edge.from);
    successors.get(edge.from)!.push(edge.to);
  });

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
    const isTrigger = registered[i]?.definition.trigger === true;
    const incoming = predecessors.get(spec.id)?.length ?? 0;
    if (isTrigger && incoming > 0) {
      problems.push({ field: `nodes[${i}]`, reason: 'a trigger node cannot have incoming edges', nodeId: spec.id });
    }
    if (!isTrigger && incoming === 0 && registered[i]) {
      problems.push({ field: `nodes[${i}]`, reason: 'not connected: every node except the trigger needs an incoming edge', nodeId: spec.id });
    }
    if (isTrigger && spec.runMode === 'item') {
      problems.push({ field: `nodes[${i}].runMode`, reason: 'a trigger runs once per run: run mode must be "input"', nodeId: spec.id });
    }
  });

  const order = topologicalOrder(specs, predecessors, successors, problems);
  const compiled = new Map<string, CompiledNode>();
  specs.forEach((spec, i) => {
    const node = registered[i];
    if (!node) return;
    const built = compileNode(spec, i, node, predecessors.get(spec.id) ?? [], problems);
    if (built) compiled.set(spec.id, built);
  });

  if (problems.length) {
    throw new AppError(ErrorCode.VALIDATION_FAILED, `The workflow definition has ${problems.length} problem(s)`, {
      details: { fields: problems },
    });
  }
  const nodes = order.map((id, position) => ({ ...compiled.get(id)!, position }));
  return { nodes, trigger: nodes.find((n) => n.node.definition.trigger)! };
}

function resolveType(spec: WorkflowNodeSpec, i: number, registry: NodeRegistry, problems: DefinitionProblem[]): RegisteredNode | null {
  const node = registry.get(spec.type, spec.version);
  if (node) return node;
  const known = registry.versionsOf(spec.type);
  problems.push(
    known.length
      ? { field: `nodes[${i}].version`, reason: `node type ${spec.type} has no version ${spec.version}; loaded: ${known.join(', ')}`, nodeId: spec.id }
      : { field: `nodes[${i}].type`, reason: `unknown node type "${spec.type}"`, nodeId: spec.id },
  );
  return null;
}

/** Kahn's algorithm, taking ready nodes in definition order so the order is stable. */
function topologicalOrder(
  specs: WorkflowNodeSpec[],
  predecessors: Map<string, string[]>,
  successors: Map<string, string[]>,
  problems: DefinitionProblem[],
): string[] {
  const remaining = new Map(specs.map((s) => [s.id, predecessors.get(s.id)?.length ?? 0]));
  const order: string[] = [];
  while (order.length < remaining.size) {
    const ready = specs.find((s) => remaining.get(s.id) === 0);
    if (!ready) break;
    remaining.set(ready.id, -1);
    order.push(ready.id);
    for (const next of successors.get(ready.id) ?? []) remaining.set(next, remaining.get(next)! - 1);
  }
  if (order.length < remaining.size) {
    const stuck = new Set([...remaining].filter(([, n]) => n > 0).map(([id]) => id));
    const cycle = findCycle(stuck, successors);
    problems.push({ field: 'edges', reason: `the edges form a cycle: ${cycle.join(' -> ')}`, nodeId: cycle[0] });
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

function compileNode(
  spec: WorkflowNodeSpec,
  i: number,
  node: RegisteredNode,
  predecessors: string[],
  problems: DefinitionProblem[],
): CompiledNode | null {
  const before = problems.length;
  const fixed: Record<string, unknown> = {};
  const expressions: ExpressionParameter[] = [];
  const modes = spec.parameterMode ?? {};
  for (const [name, mode] of Object.entries(modes)) {
    if (!node.parameterNames.has(name)) {
      problems.push({ field: `nodes[${i}].parameterMode.${name}`, reason: `${node.definition.type} has no parameter "${name}"`, nodeId: spec.id });
    } else if (mode === 'expression' && !node.expressionParameters.has(name)) {
      problems.push({ field: `nodes[${i}].parameterMode.${name}`, reason: `parameter "${name}" of ${node.definition.type} does not accept expressions`, nodeId: spec.id });
    }
  }
  for (const [name, value] of Object.entries(spec.parameters ?? {})) {
    if (modes[name] !== 'expression') {
      fixed[name] = value;
      continue;
    }
    if (typeof value !== 'string' || !value.trim()) {
      problems.push({ field: `nodes[${i}].parameters.${name}`, reason: 'an expression must be a non-empty string', nodeId: spec.id });
      continue;
    }
    expressions.push({ name, source: value, type: node.parameterTypes[name] ?? 'unknown' });
  }
  const expressionNames = new Set(expressions.map((e) => e.name));
  for (const problem of parameterProblems(node, fixed)) {
    const name = problem.field.split(/[.[]/)[0];
    if (expressionNames.has(name) && !(name in fixed)) continue;
    problems.push({ field: `nodes[${i}].parameters.${problem.field}`, reason: problem.reason, nodeId: spec.id });
  }
  if (problems.length > before) return null;
  return {
    id: spec.id,
    position: -1,
    spec,
    node,
    runMode: spec.runMode ?? node.definition.defaultRunMode,
    continueOnError: spec.continueOnError ?? false,
    maxAttempts: spec.retry?.maxAttempts ?? 1,
    backoffMs: spec.retry?.backoffMs ?? DEFAULT_BACKOFF_MS,
    timeoutMs: spec.timeoutMs ?? null,
    predecessors,
    fixed: Object.freeze(fixed),
    expressions,
    staticParams: expressions.length ? null : buildParams(node, fixed).instance,
  };
}

/** The problems of a parameter object against the node's parameter class. */
export function parameterProblems(node: RegisteredNode, values: Record<string, unknown>): FieldError[] {
  return buildParams(node, values).problems;
}

/** Validates parameter values into a frozen instance of the node's parameter class. */
export function buildParams(node: RegisteredNode, values: Record<string, unknown>): { instance: object; problems: FieldError[] } {
  const instance = plainToInstance(node.definition.parameters, values) as object;
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });
  return { instance: Object.freeze(instance), problems: fieldErrors(errors) };
}
