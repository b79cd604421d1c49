import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AppError, FieldError } from '../common/app-error';
import { fieldErrors } from '../common/input-validation';
import type { RunMode } from '../sdk';
import { WorkflowDefinition, WorkflowNodeSpec } from './workflow-definition.model';
import { DecidedParameter } from './ai-decide/parameter-decider.port';
import { codeSyntaxProblem, expressionSyntaxProblem, SyntaxProblem } from './expressions/expression-syntax';
import { isTemplate } from './expressions/template';
import { NodeRegistry, RegisteredNode } from './node-registry';
import { JsonSchema, ParameterType } from './parameter-schema';
import { validOutputs } from './plugin-loader';

/** A problem of a definition; `nodeId` says which node, when it is about one. */
export interface DefinitionProblem extends FieldError {
  nodeId?: string;
  /** For a syntax error in an expression or code parameter: where, 1-based. */
  line?: number;
  column?: number;
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
  /**
   * A trigger that starts runs by itself or is offered as an MCP tool (`schedule`, `tool`) must
   * have fixed parameters: the service reads them when the version is published, before any run,
   * so an expression, a template or AI Decide there is refused rather than silently ignored.
   * Checked where a definition is saved, published or activated; runs of versions published
   * before the rule still compile.
   */
  fixedTriggerParameters?: boolean;
}

/** An edge as the executor follows it: which output of which node feeds this one. */
export interface CompiledEdge {
  readonly from: string;
  readonly output: string;
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
  /** The node's output names; a plain return value goes to the first. */
  readonly outputs: readonly string[];
  /** Incoming edges in definition order, back edges of a loop excluded. */
  readonly incoming: readonly CompiledEdge[];
  /** Ids of the nodes those edges come from, each once, in definition order. */
  readonly predecessors: readonly string[];
  /** For a loop node: the edges from its body that bring each iteration's result back. */
  readonly backEdges: readonly CompiledEdge[];
  /** The innermost loop whose body holds this node; null outside loops. */
  readonly loop: string | null;
  readonly fixed: Readonly<Record<string, unknown>>;
  /** Expressions, and templates of template parameters in fixed mode. */
  readonly expressions: readonly ExpressionParameter[];
  readonly aiParameters: readonly AiParameter[];
  /** Validated and frozen once when every parameter is fixed, shared by every run. */
  readonly staticParams: object | null;
  /** Whether running the node twice is harmless, given its resolved parameters. */
  readonly idempotent: (params: object) => boolean;
  /** True when that holds whatever the parameters (decidable before running it). */
  readonly alwaysIdempotent: boolean;
}

/** A definition checked against the loaded node types, in execution order. Immutable, so cacheable. */
export interface CompiledWorkflow {
  readonly nodes: readonly CompiledNode[];
  readonly trigger: CompiledNode;
  readonly byId: ReadonlyMap<string, CompiledNode>;
}

export const DEFAULT_BACKOFF_MS = 1000;

interface Edge {
  from: string;
  to: string;
  output: string;
  index: number;
}

/**
 * Checks everything the shape validation of the DTO cannot: node types and versions, parameters
 * (expressions and code parse), outputs named by edges, the graph (dangling edges, cycles other
 * than a loop's, one trigger, everything connected, loops that nest) and returns the execution
 * plan. Every problem is collected, so one 400 lists them all.
 *
 * Execution order: topological over the edges without the loops' back edges, ready nodes taken
 * in definition order, and a loop after every node outside it that its body reads from.
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
  const prepared = new Map<string, PreparedNode>();
  specs.forEach((spec, i) => {
    const node = registered[i];
    if (!node || prepared.has(spec.id)) return;
    const built = prepareNode(spec, i, node, problems, options);
    if (built) prepared.set(spec.id, built);
  });

  const declared = new Map(specs.map((spec, i) => [spec.id, registered[i]] as const));
  const edges = checkEdges(definition, indexById, prepared, declared, problems);
  const loops = specs.filter((spec) => declared.get(spec.id)?.definition.loop === true).map((spec) => spec.id);
  const structure = loopStructure(loops, edges, specs, problems);
  checkTriggersAndConnections(specs, registered, edges, structure, problems);
  const order = executionOrder(specs, edges, structure, problems);

  if (problems.length) {
    throw AppError.validation(problems, `The workflow definition has ${problems.length} problem(s)`);
  }
  const nodes = order.map((id, position): CompiledNode => {
    const incoming = edges.filter((e) => e.to === id && !structure.backEdges.has(e));
    return {
      ...prepared.get(id)!,
      position,
      incoming: incoming.map(({ from, output }) => ({ from, output })),
      predecessors: [...new Set(incoming.map((e) => e.from))],
      backEdges: edges.filter((e) => e.to === id && structure.backEdges.has(e)).map(({ from, output }) => ({ from, output })),
      loop: structure.innermost.get(id) ?? null,
    };
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return { nodes, trigger: nodes.find((n) => n.node.definition.trigger)!, byId };
}

type PreparedNode = Omit<CompiledNode, 'position' | 'incoming' | 'predecessors' | 'backEdges' | 'loop'>;

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

/** Edges that name existing nodes and outputs, each once; the others are problems. */
function checkEdges(
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
    const known = source?.outputs ?? staticOutputs(declared.get(edge.from) ?? null);
    const output = edge.output ?? known?.[0] ?? 'main';
    if (known && !known.includes(output)) {
      problems.push({
        field: `edges[${index}].output`,
        reason: `node "${edge.from}" has no output "${output}"; its outputs: ${known.join(', ')}`,
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

/** Outputs a node declares whatever its parameters; null when they depend on them. */
function staticOutputs(node: RegisteredNode | null): readonly string[] | null {
  if (!node) return null;
  const outputs = node.definition.outputs;
  return outputs === undefined ? ['main'] : typeof outputs === 'function' ? null : outputs;
}

interface LoopStructure {
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
function loopStructure(loops: string[], edges: Edge[], specs: WorkflowNodeSpec[], problems: DefinitionProblem[]): LoopStructure {
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
        problems.push({ field: 'edges', reason: `loops "${a}" and "${b}" overlap: one loop's body must hold the other loop whole, or they must be apart`, nodeId: a });
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

function checkTriggersAndConnections(
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
      problems.push({ field: `nodes[${i}]`, reason: `a trigger node cannot be inside loop "${structure.innermost.get(spec.id)}"`, nodeId: spec.id });
    }
    if (!isTrigger && incoming === 0 && registered[i]) {
      problems.push({ field: `nodes[${i}]`, reason: 'not connected: every node except the trigger needs an incoming edge', nodeId: spec.id });
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
function executionOrder(specs: WorkflowNodeSpec[], edges: Edge[], structure: LoopStructure, problems: DefinitionProblem[]): string[] {
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

function prepareNode(
  spec: WorkflowNodeSpec,
  i: number,
  node: RegisteredNode,
  problems: DefinitionProblem[],
  options: CompileOptions,
): PreparedNode | null {
  const before = problems.length;
  const type = node.definition.type;
  const fixed: Record<string, unknown> = {};
  const expressions: ExpressionParameter[] = [];
  const aiParameters: AiParameter[] = [];
  const modes = spec.parameterMode ?? {};
  const parameters = spec.parameters ?? {};
  const problem = (field: string, reason: string, where?: SyntaxProblem) =>
    problems.push({ field: `nodes[${i}].${field}`, reason, nodeId: spec.id, ...(where ? { line: where.line, column: where.column } : {}) });
  const syntax = (name: string, found: SyntaxProblem | null, what: string) => {
    if (found) problem(`parameters.${name}`, `${what} has a syntax error at line ${found.line}, column ${found.column}: ${found.message}`, found);
  };

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
        syntax(name, expressionSyntaxProblem(value), 'the template');
        expressions.push({ name, source: value, type: 'string' });
      } else {
        if (node.codeParameters.has(name) && typeof value === 'string') syntax(name, codeSyntaxProblem(value), 'the code');
        fixed[name] = value;
      }
      continue;
    }
    if (typeof value !== 'string' || !value.trim()) {
      problem(`parameters.${name}`, 'an expression must be a non-empty string');
      continue;
    }
    syntax(name, expressionSyntaxProblem(value), 'the expression');
    expressions.push({ name, source: value, type: node.parameterTypes[name] ?? 'unknown' });
  }
  const trigger = node.definition.trigger;
  if (options.fixedTriggerParameters && typeof trigger === 'object' && (trigger.schedule || trigger.tool)) {
    const what = trigger.schedule ? 'starts runs on a schedule' : 'is offered as an MCP tool';
    const reason = `${type} ${what}, read from its parameters when the version is published, before any run: they must be fixed values`;
    for (const { name } of expressions) problem(`parameters.${name}`, `${reason}, not an expression or template`);
    for (const { name } of aiParameters) problem(`parameterMode.${name}`, `${reason}, not AI Decide`);
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
  const outputs = resolveOutputs(node, built.instance, deferred, problem);
  if (!outputs) return null;
  const { idempotent, alwaysIdempotent } = idempotency(node, dynamic ? null : built.instance);
  return {
    id: spec.id,
    node,
    runMode: spec.runMode ?? node.definition.defaultRunMode,
    continueOnError: spec.continueOnError ?? false,
    maxAttempts: spec.retry?.maxAttempts ?? 1,
    backoffMs: spec.retry?.backoffMs ?? DEFAULT_BACKOFF_MS,
    timeoutMs: spec.timeoutMs ?? null,
    outputs,
    fixed: Object.freeze(fixed),
    expressions,
    aiParameters,
    staticParams: dynamic ? null : built.instance,
    idempotent,
    alwaysIdempotent,
  };
}

/** The node's outputs; those that depend on parameters are read from the fixed ones. */
function resolveOutputs(
  node: RegisteredNode,
  fixedParams: object,
  deferred: Set<string>,
  problem: (field: string, reason: string) => void,
): readonly string[] | null {
  const declared = node.definition.outputs;
  if (declared === undefined) return ['main'];
  if (typeof declared !== 'function') return declared;
  let outputs: unknown;
  try {
    outputs = declared(fixedParams);
  } catch (error) {
    outputs = error;
  }
  if (!validOutputs(outputs)) {
    const dynamic = [...deferred];
    problem(
      'parameters',
      dynamic.length
        ? `the outputs of ${node.definition.type} depend on its parameters, which must then be fixed (not ${dynamic.join(', ')})`
        : `the parameters give ${node.definition.type} no valid outputs: names must be distinct letters, digits, _ or -`,
    );
    return null;
  }
  return outputs;
}

function idempotency(node: RegisteredNode, staticParams: object | null): Pick<CompiledNode, 'idempotent' | 'alwaysIdempotent'> {
  const declared = node.definition.idempotent;
  if (declared === undefined || declared === true) return { idempotent: () => true, alwaysIdempotent: true };
  if (declared === false) return { idempotent: () => false, alwaysIdempotent: false };
  const decide = (params: object) => declared(params) !== false;
  return { idempotent: decide, alwaysIdempotent: staticParams !== null && decide(staticParams) };
}

/** Validates parameter values into a frozen instance of the node's parameter class. */
export function buildParams(node: RegisteredNode, values: Record<string, unknown>): { instance: object; problems: FieldError[] } {
  const instance = plainToInstance(node.definition.parameters, values) as object;
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });
  return { instance: Object.freeze(instance), problems: fieldErrors(errors) };
}
