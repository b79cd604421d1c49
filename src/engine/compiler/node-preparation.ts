// The node's half of compiling a definition: its type, its parameters by mode (fixed values
// validated once, expressions and templates syntax-checked, AI Decide's schemas), its outputs and
// whether it may run twice. Problems are collected, not thrown.
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { FieldError } from '../../common/app-error';
import { fieldErrors } from '../../common/input-validation';
import { WorkflowNodeSpec } from '../../domain/workflow-definition.model';
import { codeSyntaxProblem, expressionSyntaxProblem, SyntaxProblem } from '../expressions/expression-syntax';
import { isTemplate } from '../expressions/template';
import { NodeRegistry, RegisteredNode } from '../node-registry';
import { JsonSchema } from '../parameter-schema';
import { validOutputs } from '../plugin-loader';
import { AiParameter, CompiledNode, CompileOptions, DefinitionProblem, ExpressionParameter, PreparedNode } from './compiled-plan';
import { onErrorOf, tryPolicyOf, withErrorOutput } from './failure-settings';

export function resolveType(
  spec: WorkflowNodeSpec,
  i: number,
  registry: NodeRegistry,
  problems: DefinitionProblem[],
): RegisteredNode | null {
  const node = registry.get(spec.type, spec.version);
  if (node) return node;
  const known = registry.versionsOf(spec.type);
  problems.push(
    known.length
      ? {
          field: `nodes[${i}].version`,
          reason: `node type ${spec.type} has no version ${spec.version}; loaded: ${known.join(', ')}`,
          nodeId: spec.id,
        }
      : { field: `nodes[${i}].type`, reason: `unknown node type "${spec.type}"`, nodeId: spec.id },
  );
  return null;
}

export function prepareNode(
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
    if (found)
      problem(`parameters.${name}`, `${what} has a syntax error at line ${found.line}, column ${found.column}: ${found.message}`, found);
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
  for (const name of node.credentialParameters.keys()) {
    if ((modes[name] ?? 'fixed') !== 'fixed') {
      problem(
        `parameterMode.${name}`,
        `is a credential: it must be a fixed value (a credential's id), chosen when the workflow is saved, never an expression or AI Decide`,
      );
    }
  }
  const trigger = node.definition.trigger;
  if (options.fixedTriggerParameters && typeof trigger === 'object' && (trigger.schedule || trigger.tool)) {
    const what = trigger.schedule ? 'starts runs on a schedule' : 'is offered as an MCP tool';
    const reason = `${type} ${what}, read from its parameters when the version is published, before any run: they must be fixed values`;
    for (const { name } of expressions) problem(`parameters.${name}`, `${reason}, not an expression or template`);
    for (const { name } of aiParameters) problem(`parameterMode.${name}`, `${reason}, not AI Decide`);
  }
  if (spec.disabled && node.definition.trigger) problem('disabled', 'a trigger cannot be disabled: it is how every run starts');
  if (spec.disabled && node.definition.loop)
    problem('disabled', 'a loop cannot be disabled: its body would run once on the whole input; disable the nodes of its body instead');
  const onError = onErrorOf(spec, problem);
  const tries = tryPolicyOf(spec, problem);
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
  const declared = resolveOutputs(node, built.instance, deferred, problem);
  const outputs = declared && withErrorOutput(declared, onError, type, problem);
  if (!outputs) return null;
  const { idempotent, alwaysIdempotent } = idempotency(node, dynamic ? null : built.instance);
  return {
    id: spec.id,
    node,
    runMode: spec.runMode ?? node.definition.defaultRunMode,
    onError,
    tries,
    timeoutMs: spec.timeoutMs ?? null,
    outputs,
    fixed: Object.freeze(fixed),
    expressions,
    aiParameters,
    staticParams: dynamic ? null : built.instance,
    disabled: spec.disabled === true,
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
  let instance: object;
  try {
    instance = plainToInstance(node.definition.parameters, values) as object;
  } catch (error) {
    // class-transformer takes an own `constructor` key of a nested object for its class, and fails
    // (an expression's result carrying an API's JSON): the parameter is named, not an INTERNAL error.
    const field = Object.keys(values).find((key) => holdsConstructorKey(values[key]));
    if (field === undefined) throw error;
    return {
      instance: Object.freeze({}),
      problems: [{ field, reason: 'holds an object with a key named "constructor", which parameter values cannot carry' }],
    };
  }
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });
  return { instance: Object.freeze(instance), problems: fieldErrors(errors) };
}

/** Whether `value` holds, at any depth, an object with an own `constructor` key (walked without recursion: values may nest deep). */
function holdsConstructorKey(value: unknown): boolean {
  const stack = [value];
  while (stack.length) {
    const next = stack.pop();
    if (typeof next !== 'object' || next === null) continue;
    if (!Array.isArray(next) && Object.prototype.hasOwnProperty.call(next, 'constructor')) return true;
    for (const item of Object.values(next)) stack.push(item);
  }
  return false;
}
