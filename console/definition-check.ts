import type { FieldProblem, NodeType, ParameterMode } from './api-types';
import { isObject, validateSchema } from './json-schema';

/** The server's rule (NODE_ID in src/domain/workflow-definition.model.ts): ids are read in expressions as nodes.<id>. */
const NODE_ID = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const OUTPUT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface CheckResult {
  /** The text as JSON, whatever its problems: what a save sends. Undefined when the text is not JSON. */
  value?: unknown;
  /** What this check finds; advisory, as the next comment says. */
  problems: FieldProblem[];
}

/** A problem as the editor shows it: `advisory` when only the console's own check found it. */
export interface ShownProblem extends FieldProblem {
  advisory?: boolean;
}

/**
 * Checks a workflow definition, as JSON text, while it is written: its shape, node types and
 * versions, each fixed parameter against its node type's JSON Schema, the parameter modes, the
 * edges and the one trigger. Problems use the server's `{field, reason, nodeId}` so both lists
 * read alike. They are advice, never a reason not to save: these rules copy the server's, and a
 * copy drifts, so the server's answer to the save is the one that counts. What needs the engine
 * (expression syntax, outputs of a Switch, loops, cycles) is the server's alone to find.
 */
export function checkDefinition(text: string, nodeTypes: readonly NodeType[], modes: readonly ParameterMode[]): CheckResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { problems: [{ field: '(json)', reason: `not valid JSON: ${(error as Error).message}` }] };
  }
  const problems: FieldProblem[] = [];
  if (!isObject(parsed))
    return { value: parsed, problems: [{ field: '(json)', reason: 'the definition must be a JSON object with "nodes" and "edges"' }] };
  if (!Array.isArray(parsed.nodes)) return { value: parsed, problems: [{ field: 'nodes', reason: 'must be an array of nodes' }] };
  if (parsed.edges !== undefined && !Array.isArray(parsed.edges)) problems.push({ field: 'edges', reason: 'must be an array of edges' });
  if (parsed.variables !== undefined && !Array.isArray(parsed.variables))
    problems.push({ field: 'variables', reason: 'must be an array of variables' });
  if (parsed.pinnedData !== undefined && !isObject(parsed.pinnedData))
    problems.push({ field: 'pinnedData', reason: 'must be an object of inputs by node id' });
  if (parsed.notes !== undefined && !Array.isArray(parsed.notes))
    problems.push({ field: 'notes', reason: 'must be an array of sticky notes' });
  for (const key of Object.keys(parsed)) {
    if (!['nodes', 'edges', 'variables', 'pinnedData', 'notes'].includes(key))
      problems.push({ field: key, reason: 'is not part of a definition (nodes, edges, variables, pinnedData, notes)' });
  }
  if (isObject(parsed.pinnedData) && Array.isArray(parsed.nodes)) {
    const known = new Set(parsed.nodes.map((n) => (isObject(n) ? n.id : undefined)));
    for (const id of Object.keys(parsed.pinnedData))
      if (!known.has(id)) problems.push({ field: `pinnedData.${id}`, reason: 'names no node of the workflow' });
  }

  const ids = new Map<string, number>();
  /** Nodes whose type and version resolved: only they are judged on their connections, as the server does. */
  const resolved = new Set<string>();
  const triggers: string[] = [];
  parsed.nodes.forEach((node: unknown, i: number) => {
    const at = `nodes[${i}]`;
    if (!isObject(node)) {
      problems.push({ field: at, reason: 'must be an object' });
      return;
    }
    const id = typeof node.id === 'string' ? node.id : '';
    const nodeId = id || undefined;
    const problem = (field: string, reason: string) =>
      problems.push({ field: `${at}${field ? `.${field}` : ''}`, reason, ...(nodeId ? { nodeId } : {}) });
    if (!NODE_ID.test(id)) problem('id', 'must start with a letter or _ and hold at most 64 letters, digits, _ or -');
    else if (ids.has(id)) problem('id', `duplicate node id "${id}"`);
    else ids.set(id, i);

    const versions = nodeTypes.filter((t) => t.type === node.type);
    if (typeof node.type !== 'string' || !versions.length) {
      problem('type', `unknown node type ${JSON.stringify(node.type)}`);
      return;
    }
    const wanted = node.version === undefined ? Math.max(...versions.map((v) => v.version)) : node.version;
    const nodeType = versions.find((v) => v.version === wanted);
    if (!nodeType) {
      problem(
        'version',
        `node type ${node.type} has no version ${JSON.stringify(node.version)}; loaded: ${versions.map((v) => v.version).join(', ')}`,
      );
      return;
    }
    resolved.add(id);
    if (nodeType.trigger) triggers.push(id);
    if (node.runMode !== undefined && node.runMode !== 'input' && node.runMode !== 'item') problem('runMode', 'must be "input" or "item"');
    if (node.continueOnError !== undefined && typeof node.continueOnError !== 'boolean')
      problem('continueOnError', 'must be true or false');
    if (node.disabled !== undefined && typeof node.disabled !== 'boolean') problem('disabled', 'must be true or false');
    if (node.disabled === true && nodeType.trigger) problem('disabled', 'a trigger cannot be disabled: it is how every run starts');
    if (node.parameters !== undefined && !isObject(node.parameters)) {
      problem('parameters', 'must be an object of parameter values');
      return;
    }
    if (node.parameterMode !== undefined && !isObject(node.parameterMode)) {
      problem('parameterMode', 'must map parameter names to fixed, expression or ai');
      return;
    }
    const parameters = (node.parameters ?? {}) as Record<string, unknown>;
    const parameterModes = (node.parameterMode ?? {}) as Record<string, unknown>;
    const properties = (nodeType.parameters.properties ?? {}) as Record<string, unknown>;
    for (const [name, mode] of Object.entries(parameterModes)) {
      if (!(name in properties)) problem(`parameterMode.${name}`, `${nodeType.type} has no parameter "${name}"`);
      else if (!modes.includes(mode as ParameterMode)) problem(`parameterMode.${name}`, `must be one of ${modes.join(', ')}`);
      else if (mode === 'expression' && (typeof parameters[name] !== 'string' || !(parameters[name] as string).trim())) {
        problem(`parameters.${name}`, 'an expression must be a non-empty string');
      } else if (mode === 'ai' && parameters[name] !== undefined && typeof parameters[name] !== 'string') {
        problem(`parameters.${name}`, 'in AI Decide mode the value is an optional hint for the model, so it must be text');
      }
    }
    // Values computed at run time (expression, AI Decide) are checked then, by the server.
    const fixedNames = Object.keys(parameters).filter((name) => (parameterModes[name] ?? 'fixed') === 'fixed');
    const deferred = new Set(Object.keys(parameterModes).filter((name) => parameterModes[name] !== 'fixed'));
    const fixed = Object.fromEntries(fixedNames.map((name) => [name, parameters[name]]));
    for (const found of validateSchema(nodeType.parameters, fixed)) {
      const name = found.path.split('.')[0];
      if (deferred.has(name)) continue;
      problem(`parameters${found.path ? `.${found.path}` : ''}`, found.reason);
    }
  });
  if (triggers.length !== 1) {
    problems.push({
      field: 'nodes',
      reason: triggers.length
        ? `has ${triggers.length} triggers (${triggers.join(', ')}): a workflow has exactly one`
        : 'needs exactly one trigger node',
    });
  }

  const edges: unknown[] = Array.isArray(parsed.edges) ? parsed.edges : [];
  const incoming = new Set<string>();
  edges.forEach((edge, i) => {
    const at = `edges[${i}]`;
    if (!isObject(edge)) {
      problems.push({ field: at, reason: 'must be an object {from, to, output?}' });
      return;
    }
    for (const end of ['from', 'to'] as const) {
      if (typeof edge[end] !== 'string' || !ids.has(edge[end] as string))
        problems.push({ field: `${at}.${end}`, reason: `no node has the id ${JSON.stringify(edge[end])}` });
    }
    if (edge.from === edge.to)
      problems.push({ field: at, reason: `node "${String(edge.from)}" cannot feed itself`, nodeId: String(edge.from) });
    if (edge.output !== undefined && (typeof edge.output !== 'string' || !OUTPUT_NAME.test(edge.output))) {
      problems.push({ field: `${at}.output`, reason: 'must be an output name of the node (letters, digits, _ or -)' });
    }
    if (typeof edge.to === 'string') incoming.add(edge.to);
  });
  for (const id of triggers) {
    if (incoming.has(id))
      problems.push({ field: `nodes[${ids.get(id)}]`, reason: 'a trigger node cannot have incoming edges', nodeId: id });
  }
  for (const [id, i] of ids) {
    if (resolved.has(id) && !triggers.includes(id) && !incoming.has(id)) {
      problems.push({ field: `nodes[${i}]`, reason: 'not connected: every node except the trigger needs an incoming edge', nodeId: id });
    }
  }
  return { value: parsed, problems };
}

/** Problems grouped by the node they concern, in node order; the others under ''. */
export function problemsByNode<P extends FieldProblem>(problems: readonly P[]): Map<string, P[]> {
  const groups = new Map<string, P[]>();
  for (const problem of problems) {
    const key = problem.nodeId ?? '';
    groups.set(key, [...(groups.get(key) ?? []), problem]);
  }
  return groups;
}
