import { ErrorCode, FieldError, isAppError } from '../../common/app-error';
import type { LoopState, VariableValue } from '../../sdk';
import type { CompiledNode, ExpressionParameter } from '../compiler/compiled-plan';
import { buildParams } from '../compiler/node-preparation';
import type { Redactor } from '../redactor';
import type { ExecutorDependencies, RunRequest } from './run-contract';
import { asObject, classify, StepFailure } from './step-failure';
import { runShare } from '../../jobs/fair-turns';

/** Questions to the model per execution: the first, and one correction of an answer that did not validate. */
export const AI_DECIDE_ROUNDS = 2;
/** The parameter AI Decide reads as the author's guidance, when a node has one. */
const INSTRUCTIONS_PARAMETER = 'instructions';

type ParameterBinding = { runMode: 'input'; input: unknown; loop?: LoopState } | { runMode: 'item'; item: unknown };

/**
 * A node's parameters for one execution: fixed values as compiled, expressions and templates
 * evaluated in the sandbox and coerced to the parameter's type, AI Decide's values asked of the
 * model; then validated by the node's parameter class. Failures here are configuration errors
 * (never retried), naming the node and the parameter.
 */
export class ParameterResolver {
  /**
   * Per compiled node (one per published version, kept by the plan cache), the expression results
   * its parameter class last accepted and the frozen instance they made: the same scalar results
   * (an `if` condition's `true`, a body rendered from the same input) are not validated again.
   * A parameter class's validators read the values alone, so the same values get the same answer.
   */
  private readonly lastValid = new WeakMap<CompiledNode, { results: unknown[]; instance: object }>();

  constructor(private readonly deps: Pick<ExecutorDependencies, 'expressions' | 'decider' | 'logger'>) {}

  async resolve(
    node: CompiledNode,
    binding: ParameterBinding,
    nodes: Readonly<Record<string, unknown>>,
    request: RunRequest,
    signal: AbortSignal,
  ): Promise<object> {
    const values: Record<string, unknown> = Object.assign({}, node.fixed);
    const scope = scopeFor(binding, request.variables, nodes);
    const options = node.expressions.length ? { signal, share: runShare(request) } : undefined;
    const results: unknown[] = [];
    for (const expression of node.expressions) {
      let result: unknown;
      try {
        result = await this.deps.expressions.evaluate(expression.source, scope, options);
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw expressionFailure(node, expression, error, request.redactor);
      }
      results.push((values[expression.name] = coerce(result, expression.type)));
    }
    if (node.aiParameters.length) return this.decide(node, values, binding, request, signal);
    const last = this.lastValid.get(node);
    if (last && sameScalars(last.results, results)) return last.instance;
    const { instance, problems } = buildParams(node.node, values);
    if (problems.length) throw invalidParams(node, problems, request.redactor, 'after evaluating expressions');
    if (results.every(isScalar)) this.lastValid.set(node, { results, instance });
    return instance;
  }

  /**
   * AI Decide: asks the model for the node's `ai` parameters, then coerces and validates its answer
   * like any other value. An answer that does not validate is sent back once with the problems;
   * the model sees no secret (the request is masked like a run record).
   */
  private async decide(
    node: CompiledNode,
    values: Record<string, unknown>,
    binding: { runMode: 'input'; input: unknown } | { runMode: 'item'; item: unknown },
    request: RunRequest,
    signal: AbortSignal,
  ): Promise<object> {
    const names = node.aiParameters.map((p) => p.name);
    const decider = this.deps.decider;
    if (!decider) {
      throw new StepFailure(
        {
          code: ErrorCode.NODE_CONFIGURATION,
          message: `Node "${node.id}" uses AI Decide for ${names.join(', ')}, but no language model is configured (LLM_URL)`,
          details: { nodeId: node.id, parameters: names },
        },
        0,
      );
    }
    const { definition } = node.node;
    const instructions = values[INSTRUCTIONS_PARAMETER];
    const question = request.redactor.value({
      node: { id: node.id, type: definition.type, displayName: definition.displayName, description: definition.description },
      instructions: typeof instructions === 'string' ? instructions : '',
      input: (binding.runMode === 'input' ? binding.input : binding.item) ?? null,
      parameters: node.aiParameters.map(({ name, schema, hint, required }) => ({ name, schema, hint, required })),
    });
    let correction: { answer: unknown; problems: FieldError[] } | undefined;
    for (let round = 1; ; round++) {
      let answer: unknown;
      try {
        answer = await decider.decide({ ...question, ...(correction ? { correction } : {}) }, signal);
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const { error: cause } = classify(error);
        throw new StepFailure(
          {
            ...cause,
            message: `AI Decide for node "${node.id}" failed: ${cause.message}`,
            details: { ...(asObject(cause.details) ?? {}), nodeId: node.id, parameters: names },
          },
          0,
        );
      }
      const chosen = asObject(answer);
      const decided = { ...values };
      for (const parameter of node.aiParameters) decided[parameter.name] = coerce(chosen?.[parameter.name], parameter.type);
      const { instance, problems } = buildParams(node.node, decided);
      const refused: FieldError[] = chosen ? problems : [{ field: '(answer)', reason: 'must be a JSON object of parameter values' }];
      if (!refused.length) {
        this.deps.logger.debug(
          { runId: request.runId, nodeId: node.id, chosen: request.redactor.value(pick(chosen!, names)) },
          'AI Decide chose parameters',
        );
        return instance;
      }
      const aiOnly = refused.every((p) => p.field === '(answer)' || names.includes(p.field.split(/[.[]/)[0]));
      if (!aiOnly || round >= AI_DECIDE_ROUNDS)
        throw invalidParams(node, refused, request.redactor, `after AI Decide chose ${names.join(', ')}`);
      correction = { answer: request.redactor.value(answer), problems: refused };
    }
  }
}

/** A value validation reads whole, with nothing inside a validator could see change: not an object or array. */
const isScalar = (value: unknown): boolean => value === null || (typeof value !== 'object' && typeof value !== 'function');

/** Both lists hold the same scalars in the same order (Object.is: -0 is not taken for 0). */
const sameScalars = (known: unknown[], now: unknown[]): boolean =>
  known.length === now.length && now.every((value, i) => isScalar(value) && Object.is(value, known[i]));

/** The engine copies in only the names a source mentions, and `nodes` and `variables` (frozen) as JSON made once. */
function scopeFor(
  binding: ParameterBinding,
  variables: Readonly<Record<string, VariableValue>>,
  nodes: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  if (binding.runMode === 'item') return { item: binding.item ?? null, variables, nodes };
  return { input: binding.input ?? null, variables, nodes, ...(binding.loop ? { loop: binding.loop } : {}) };
}

/**
 * Expression results are JSON values; parameters are typed by their class. A string parameter
 * given an object (headers, body) receives its JSON text, as the HTTP Request node expects.
 */
function coerce(value: unknown, type: ExpressionParameter['type']): unknown {
  if (value === null || value === undefined) return undefined;
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
    case 'number':
    case 'integer':
      return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    default:
      return value;
  }
}

/** Parameter values produced at run time that the node's parameter class refuses: a configuration error. */
function invalidParams(node: CompiledNode, problems: FieldError[], redactor: Redactor, when: string): StepFailure {
  const fields = problems.map((p) => ({ ...p, reason: redactor.string(p.reason) }));
  return new StepFailure(
    {
      code: ErrorCode.NODE_CONFIGURATION,
      message: `Parameters of node "${node.id}" are invalid ${when}: ${fields.map((f) => `${f.field} ${f.reason}`).join('; ')}`,
      details: { nodeId: node.id, fields },
    },
    0,
  );
}

function pick(values: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.map((name) => [name, values[name]]));
}

function expressionFailure(node: CompiledNode, expression: ExpressionParameter, error: unknown, redactor: Redactor): StepFailure {
  const reason = isAppError(error)
    ? String((error.details as { reason?: unknown } | undefined)?.reason ?? error.message)
    : error instanceof Error
      ? error.message
      : String(error);
  const safeReason = redactor.string(reason);
  return new StepFailure(
    {
      code: ErrorCode.EXPRESSION_FAILED,
      message: `Expression of parameter "${expression.name}" in node "${node.id}" failed: ${safeReason}`,
      details: { nodeId: node.id, parameter: expression.name, expression: redactor.string(expression.source), reason: safeReason },
    },
    0,
  );
}
