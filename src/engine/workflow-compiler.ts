import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AppError, FieldError } from '../common/app-error';
import { fieldErrors } from '../common/validation';
import type { RunMode } from '../sdk';
import { isTemplate } from './expressions/template';
import { DecidedParameter } from './ai-decide/parameter-decider.port';
import { NodeRegistry, RegisteredNode } from './node-registry';
import { JsonSchema, ParameterType } from './parameter-schema';
import { WorkflowDefinition, WorkflowNodeSpec } from '../storage/ports/workflow-definition';

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

/** A parameter the language model chooses for each execution (AI Decide); `type` says how to coerce its answer. */
export interface AiParameter extends DecidedParameter {
  type: ParameterType;
}

export interface CompileOptions {
  /** A language model is configured (LLM_URL); without one, a workflow using AI Decide is refused. */
  aiDecide?: boolean;
}

export interface CompiledNode {
  readonly id: string;
  /** Index in the execution order. */
  readonly position: number;
  readonly node: RegisteredNode;
  readonly runMode: RunMode;
  readonly continueOnError: boolean;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly timeoutMs: number | null;
  /** Ids of the nodes whose output is this node's input, in definition order. */
  readonly predecessors: readonly string[];
  readonly fixed: Readonly<Record<string, unknown>>;
  /** Expressions, and templates of template parameters in fixed mode. */
  readonly expressions: readonly ExpressionParameter[];
  readonly aiParameters: readonly AiParameter[];
  /** Validated and frozen once when every parameter is fixed, shared by every run. */
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
export function compileWorkflow(definition: WorkflowDefinition, registry: NodeRegistry, options: CompileOptions = {}): CompiledWorkflow {
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
    const built = compileNode(spec, i, node, predecessors.get(spec.id) ?? [], problems, options);
    if (built) compiled.set(spec.id, built);
  });

  if (problems.length) {
    throw AppError.validation(problems, `The workflow definition has ${problems.length} problem(s)`);
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
  options: CompileOptions,
): CompiledNode | null {
  const before = problems.length;
  const type = node.definition.type;
  const fixed: Record<string, unknown> = {};
  const expressions: ExpressionParameter[] = [];
  const aiParameters: AiParameter[] = [];
  const modes = spec.parameterMode ?? {};
  const parameters = spec.parameters ?? {};
  const problem = (field: string, reason: string) => problems.push({ field: `nodes[${i}].${field}`, reason, nodeId: spec.id });

  for (const [name, mode] of Object.entries(modes)) {
    if (!node.parameterNames.has(name)) {
      problem(`parameterMode.${name}`, `${type} has no parameter "${name}"`);
    } else if (mode === 'expression' && !(name in parameters)) {
      problem(`parameters.${name}`, 'an expression must be a non-empty string');
    } else if (mode === 'ai') {
      if (!options.aiDecide) {
        problem(
          `parameterMode.${name}`,
          `node "${spec.id}" sets parameter "${name}" to AI Decide, but no language model is configured: set LLM_URL (and LLM_API_KEY, LLM_MODEL), or use the fixed or expression mode`,
        );
        continue;
      }
      const hint = parameters[name] ?? '';
      if (typeof hint !== 'string') {
        problem(`parameters.${name}`, 'in AI Decide mode the value is an optional hint for the model, so it must be text');
        continue;
      }
      const required = ((node.schema.required as string[] | undefined) ?? []).includes(name);
      const schema = (node.schema.properties as Record<string, JsonSchema>)[name];
      aiParameters.push({ name, hint, schema, type: node.parameterTypes[name] ?? 'unknown', required });
    }
  }
  for (const [name, value] of Object.entries(parameters)) {
    const mode = modes[name] ?? 'fixed';
    if (mode === 'ai') continue;
    if (mode === 'fixed') {
      // A template parameter's insertions are rendered in fixed mode too; plain text stays fixed.
      if (node.templateParameters.has(name) && typeof value === 'string' && isTemplate(value)) {
        expressions.push({ name, source: value, type: 'string' });
      } else {
        fixed[name] = value;
      }
      continue;
    }
    if (typeof value !== 'string' || !value.trim()) {
      problem(`parameters.${name}`, 'an expression must be a non-empty string');
      continue;
    }
    expressions.push({ name, source: value, type: node.parameterTypes[name] ?? 'unknown' });
  }
  // Values produced at run time are validated then; a missing fixed value is not a problem for them.
  const deferred = new Set([...expressions.map((e) => e.name), ...Object.keys(modes).filter((name) => modes[name] !== 'fixed')]);
  const built = buildParams(node, fixed);
  for (const { field, reason } of built.problems) {
    const name = field.split(/[.[]/)[0];
    if (deferred.has(name) && !(name in fixed)) continue;
    problem(`parameters.${field}`, reason);
  }
  if (problems.length > before) return null;
  const dynamic = expressions.length > 0 || aiParameters.length > 0;
  return {
    id: spec.id,
    position: -1,
    node,
    runMode: spec.runMode ?? node.definition.defaultRunMode,
    continueOnError: spec.continueOnError ?? false,
    maxAttempts: spec.retry?.maxAttempts ?? 1,
    backoffMs: spec.retry?.backoffMs ?? DEFAULT_BACKOFF_MS,
    timeoutMs: spec.timeoutMs ?? null,
    predecessors,
    fixed: Object.freeze(fixed),
    expressions,
    aiParameters,
    staticParams: dynamic ? null : built.instance,
  };
}

/** Validates parameter values into a frozen instance of the node's parameter class. */
export function buildParams(node: RegisteredNode, values: Record<string, unknown>): { instance: object; problems: FieldError[] } {
  const instance = plainToInstance(node.definition.parameters, values) as object;
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });
  return { instance: Object.freeze(instance), problems: fieldErrors(errors) };
}
