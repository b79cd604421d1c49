import type { Logger } from 'pino';
import { ErrorCode, FieldError, isAppError } from '../common/app-error';
import { CodeSandbox, isNodeError, LanguageModels, NodeContext, NodeErrorKind, NodeLogger, NodeTimeoutError, VariableValue } from '../sdk';
import type { RunError, StepError, StepRecord } from '../storage/ports/run-store.port';
import { ParameterDecider } from './ai-decide/parameter-decider.port';
import { NodeCollectionsProvider } from './collections-provider';
import { nodeHttpClient, OutboundFetch } from './node-http-client';
import { NO_LANGUAGE_MODEL, NO_SANDBOX, NO_WORKFLOWS } from './node-services';
import { Redactor } from './redactor';
import { isRunInterrupt, RunInterrupt } from './run-interrupt';
import { childSignal, raceSignal, sleep } from './signals';
import { buildParams, CompiledNode, CompiledWorkflow, ExpressionParameter } from './workflow-compiler';

/** The expression engine as the executor uses it (src/engine/expressions implements it). */
export interface ExpressionEvaluator {
  evaluate(source: string, scope: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown>;
}

export interface ExecutorDependencies {
  expressions: ExpressionEvaluator;
  fetcher: OutboundFetch;
  collections: NodeCollectionsProvider;
  /** `ctx.models`: the configured language model; absent when none is. */
  models?: LanguageModels;
  /** `ctx.sandbox`: JavaScript in the isolate pool (the Code node). */
  sandbox?: CodeSandbox;
  /** Chooses AI Decide parameters; absent when no language model is configured. */
  decider?: ParameterDecider;
  logger: Logger;
  runTimeoutMs: number;
}

export interface RunRequest {
  runId: string;
  workflowId: string;
  /** Whose rights `ctx.collections` acts with. */
  actingUserId: string;
  input: unknown;
  /** Decrypted; never stored as they are. */
  variables: Readonly<Record<string, VariableValue>>;
  redactor: Redactor;
  /** Aborted with a RunInterrupt on cancel or shutdown. */
  signal?: AbortSignal;
}

/** Called after each node with its record, before the next node starts. */
export type StepListener = (step: StepRecord) => Promise<void> | void;

export interface RunOutcome {
  /** `interrupted`: the process is stopping; the run is not over and must go back to the queue. */
  status: 'succeeded' | 'failed' | 'canceled' | 'interrupted';
  error: RunError | null;
  steps: StepRecord[];
}

/** Largest stored output of one step; larger ones are replaced by a note (successors still get all of it). */
export const MAX_RECORDED_OUTPUT_CHARS = 1024 * 1024;
const MAX_BACKOFF_MS = 5 * 60 * 1000;
/** Questions to the model per execution: the first, and one correction of an answer that did not validate. */
export const AI_DECIDE_ROUNDS = 2;
/** The parameter AI Decide reads as the author's guidance, when a node has one. */
export const INSTRUCTIONS_PARAMETER = 'instructions';

/** A node try that failed; `attempts` is how many tries were made. */
class StepFailure extends Error {
  constructor(
    readonly error: StepError,
    readonly attempts: number,
  ) {
    super(error.message);
  }
}

interface NodeShared {
  nodes: Readonly<Record<string, unknown>>;
  collections: NodeContext<object>['collections'];
  logger: ScopedNodeLogger;
}

interface NodeResult {
  output: unknown;
  attempts: number;
  /** Set when the node failed but continueOnError let the run go on (the error is in the output). */
  error: StepError | null;
}

/**
 * Runs a compiled workflow: nodes in topological order, each node's output its successors' input,
 * run modes, per-node retry with exponential backoff, per-node and per-run time limits and cancel
 * through AbortSignal. Pure orchestration: every side effect happens inside nodes, every record
 * goes out through the step listener, already masked.
 */
export class WorkflowExecutor {
  constructor(private readonly deps: ExecutorDependencies) {}

  async run(plan: CompiledWorkflow, request: RunRequest, onStep: StepListener): Promise<RunOutcome> {
    const parent = request.signal ?? new AbortController().signal;
    const run = childSignal(parent, this.deps.runTimeoutMs, () => new RunInterrupt('timeout', `The run exceeded its time limit of ${this.deps.runTimeoutMs} ms`));
    const outputs: Record<string, unknown> = {};
    const steps: StepRecord[] = [];
    let failure: RunError | null = null;
    // Set only when an interrupt kept a node from completing: a cancel that lands after the last
    // node finished does not turn a finished run into a canceled one.
    let stoppedBy: RunInterrupt | null = null;
    const emit = async (step: StepRecord) => {
      steps.push(step);
      await onStep(step);
    };
    try {
      for (const node of plan.nodes) {
        stoppedBy ??= interruptOf(run.signal);
        if (stoppedBy?.reason === 'shutdown') break;
        if (failure || stoppedBy) {
          await emit(skippedStep(node));
          continue;
        }
        const startedAt = new Date();
        try {
          const result = await this.runNode(node, inputOf(node, outputs, request.input), outputs, request, run.signal);
          outputs[node.id] = result.output;
          await emit(this.finishedStep(node, startedAt, result, request.redactor));
        } catch (error) {
          stoppedBy = isRunInterrupt(error) ? error : interruptOf(run.signal);
          if (stoppedBy?.reason === 'shutdown') break;
          if (stoppedBy) {
            await emit(interruptedStep(node, startedAt, stoppedBy));
            if (stoppedBy.reason === 'timeout') failure = { code: ErrorCode.TIMEOUT, message: stoppedBy.message, nodeId: node.id };
            continue;
          }
          const stepFailure = error instanceof StepFailure ? error : new StepFailure(classify(error).error, 1);
          const stepError = redactError(stepFailure.error, request.redactor);
          await emit({ ...baseStep(node), status: 'failed', attempts: stepFailure.attempts, startedAt, finishedAt: new Date(), error: stepError });
          failure = { ...stepError, message: `Node "${node.id}" failed: ${stepError.message}`, nodeId: node.id };
        }
      }
    } finally {
      run.dispose();
    }
    if (stoppedBy?.reason === 'shutdown') return { status: 'interrupted', error: null, steps };
    if (stoppedBy?.reason === 'canceled') return { status: 'canceled', error: { code: ErrorCode.CANCELED, message: 'The run was canceled' }, steps };
    return { status: failure ? 'failed' : 'succeeded', error: failure, steps };
  }

  private async runNode(
    node: CompiledNode,
    input: unknown,
    outputs: Record<string, unknown>,
    request: RunRequest,
    signal: AbortSignal,
  ): Promise<NodeResult> {
    // Shared by every item and try of this node.
    const shared: NodeShared = {
      nodes: Object.freeze({ ...outputs }),
      collections: this.deps.collections.forUser(request.actingUserId),
      logger: new ScopedNodeLogger(this.deps.logger, request, node.id),
    };
    if (node.runMode === 'input') {
      try {
        const { output, attempts } = await this.runItem(node, { runMode: 'input', input }, shared, request, signal);
        return { output, attempts, error: null };
      } catch (error) {
        if (!(error instanceof StepFailure) || !node.continueOnError) throw error;
        const stepError = redactError(error.error, request.redactor);
        return { output: { error: stepError }, attempts: error.attempts, error: stepError };
      }
    }
    const items = Array.isArray(input) ? input : [input];
    const results: unknown[] = [];
    let attempts = 0;
    let firstError: StepError | null = null;
    for (let index = 0; index < items.length; index++) {
      try {
        const result = await this.runItem(node, { runMode: 'item', item: items[index], itemIndex: index }, shared, request, signal);
        attempts = Math.max(attempts, result.attempts);
        results.push(result.output);
      } catch (error) {
        if (!(error instanceof StepFailure)) throw error;
        const stepError = redactError(error.error, request.redactor);
        const located = { ...stepError, details: { ...(asObject(stepError.details) ?? {}), itemIndex: index } };
        if (!node.continueOnError) throw new StepFailure(located, Math.max(attempts, error.attempts));
        attempts = Math.max(attempts, error.attempts);
        firstError ??= located;
        results.push({ error: located });
      }
    }
    return { output: results, attempts, error: firstError };
  }

  /** One execution of the node (one item), with its retries. */
  private async runItem(
    node: CompiledNode,
    binding: { runMode: 'input'; input: unknown } | { runMode: 'item'; item: unknown; itemIndex: number },
    shared: NodeShared,
    request: RunRequest,
    runSignal: AbortSignal,
  ): Promise<{ output: unknown; attempts: number }> {
    const params = node.staticParams ?? (await this.resolveParams(node, binding, shared.nodes, request, runSignal));
    for (let attempt = 1; ; attempt++) {
      const limit = childSignal(runSignal, node.timeoutMs, () => new NodeTimeoutError(`Node "${node.id}" timed out after ${node.timeoutMs} ms`));
      try {
        const ctx = {
          ...binding,
          params,
          variables: request.variables,
          ...shared,
          inputs: node.predecessors.map((from) => ({ from, output: 'main', live: true, data: shared.nodes[from] })),
          models: this.deps.models ?? NO_LANGUAGE_MODEL,
          sandbox: this.deps.sandbox ?? NO_SANDBOX,
          workflows: NO_WORKFLOWS,
          http: nodeHttpClient(this.deps.fetcher, limit.signal),
          signal: limit.signal,
          runId: request.runId,
          workflowId: request.workflowId,
          nodeId: node.id,
        } as NodeContext<object>;
        const output = await raceSignal(invoke(node, ctx), limit.signal);
        return { output: output === undefined ? null : output, attempts: attempt };
      } catch (error) {
        if (runSignal.aborted) throw runSignal.reason;
        const stepError = classify(error);
        if (!stepError.retryable || attempt >= node.maxAttempts) throw new StepFailure(stepError.error, attempt);
        await sleep(Math.min(node.backoffMs * 2 ** (attempt - 1), MAX_BACKOFF_MS), runSignal);
      } finally {
        limit.dispose();
      }
    }
  }

  private async resolveParams(
    node: CompiledNode,
    binding: { runMode: 'input'; input: unknown } | { runMode: 'item'; item: unknown },
    nodes: Readonly<Record<string, unknown>>,
    request: RunRequest,
    signal: AbortSignal,
  ): Promise<object> {
    const values: Record<string, unknown> = { ...node.fixed };
    const scope = scopeFor(binding, request.variables, nodes);
    for (const expression of node.expressions) {
      let result: unknown;
      try {
        result = await this.deps.expressions.evaluate(expression.source, scope, { signal });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw expressionFailure(node, expression, error, request.redactor);
      }
      values[expression.name] = coerce(result, expression.type);
    }
    if (node.aiParameters.length) return this.decideParams(node, values, binding, request, signal);
    const { instance, problems } = buildParams(node.node, values);
    if (problems.length) throw invalidParams(node, problems, request.redactor, 'after evaluating expressions');
    return instance;
  }

  /**
   * AI Decide: asks the model for the node's `ai` parameters, then coerces and validates its answer
   * like any other value. An answer that does not validate is sent back once with the problems;
   * the model sees no secret (the request is masked like a run record).
   */
  private async decideParams(
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
        { code: ErrorCode.NODE_CONFIGURATION, message: `Node "${node.id}" uses AI Decide for ${names.join(', ')}, but no language model is configured (LLM_URL)`, details: { nodeId: node.id, parameters: names } },
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
        throw new StepFailure({ ...cause, message: `AI Decide for node "${node.id}" failed: ${cause.message}`, details: { ...(asObject(cause.details) ?? {}), nodeId: node.id, parameters: names } }, 0);
      }
      const chosen = asObject(answer);
      const decided = { ...values };
      for (const parameter of node.aiParameters) decided[parameter.name] = coerce(chosen?.[parameter.name], parameter.type);
      const { instance, problems } = buildParams(node.node, decided);
      const refused: FieldError[] = chosen ? problems : [{ field: '(answer)', reason: 'must be a JSON object of parameter values' }];
      if (!refused.length) {
        this.deps.logger.debug({ runId: request.runId, nodeId: node.id, chosen: request.redactor.value(pick(chosen!, names)) }, 'AI Decide chose parameters');
        return instance;
      }
      const aiOnly = refused.every((p) => p.field === '(answer)' || names.includes(p.field.split(/[.[]/)[0]));
      if (!aiOnly || round >= AI_DECIDE_ROUNDS) throw invalidParams(node, refused, request.redactor, `after AI Decide chose ${names.join(', ')}`);
      correction = { answer: request.redactor.value(answer), problems: refused };
    }
  }

  private finishedStep(node: CompiledNode, startedAt: Date, result: NodeResult, redactor: Redactor): StepRecord {
    return {
      ...baseStep(node),
      status: result.error ? 'failed' : 'succeeded',
      attempts: result.attempts,
      startedAt,
      finishedAt: new Date(),
      output: recordable(redactor.value(result.output)),
      error: result.error,
    };
  }
}

function invoke(node: CompiledNode, ctx: NodeContext<object>): Promise<unknown> {
  try {
    return Promise.resolve(node.node.definition.execute(ctx));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A trigger gets the run's input; a node with one predecessor its output; with several, their outputs in order. */
function inputOf(node: CompiledNode, outputs: Record<string, unknown>, runInput: unknown): unknown {
  if (node.predecessors.length === 0) return runInput;
  if (node.predecessors.length === 1) return outputs[node.predecessors[0]];
  return node.predecessors.map((id) => outputs[id]);
}

/** The engine copies in only the names a source mentions, and `nodes` and `variables` (frozen) as JSON made once. */
function scopeFor(
  binding: { runMode: 'input'; input: unknown } | { runMode: 'item'; item: unknown },
  variables: Readonly<Record<string, VariableValue>>,
  nodes: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return binding.runMode === 'input'
    ? { input: binding.input ?? null, variables, nodes }
    : { item: binding.item ?? null, variables, nodes };
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

const NODE_ERROR_CODES: Record<NodeErrorKind, ErrorCode> = {
  configuration: ErrorCode.NODE_CONFIGURATION,
  upstream: ErrorCode.UPSTREAM_FAILED,
  timeout: ErrorCode.TIMEOUT,
  stopped: ErrorCode.WORKFLOW_STOPPED,
};

function classify(error: unknown): { error: StepError; retryable: boolean } {
  if (isNodeError(error)) {
    const code = NODE_ERROR_CODES[error.kind];
    const status = (error as { status?: number }).status;
    const details = error.details || status !== undefined ? { ...error.details, ...(status !== undefined ? { status } : {}) } : undefined;
    return { error: { code, message: error.message, ...(details ? { details } : {}) }, retryable: error.retryable };
  }
  if (isAppError(error)) {
    return { error: { code: error.code, message: error.message, ...(error.details !== undefined ? { details: error.details } : {}) }, retryable: error.retryable };
  }
  if (error instanceof StepFailure) return { error: error.error, retryable: false };
  // A bug or an unexpected failure inside the node: trying again is cheap and sometimes helps.
  const message = error instanceof Error ? error.message : String(error);
  return { error: { code: ErrorCode.INTERNAL, message: message || 'The node failed without a message' }, retryable: true };
}

function redactError(error: StepError, redactor: Redactor): StepError {
  if (!redactor.active) return error;
  return { ...error, message: redactor.string(error.message), ...(error.details !== undefined ? { details: redactor.value(error.details) } : {}) };
}

function interruptOf(signal: AbortSignal): RunInterrupt | null {
  return signal.aborted && isRunInterrupt(signal.reason) ? signal.reason : null;
}

function baseStep(node: CompiledNode): Pick<StepRecord, 'nodeId' | 'position' | 'type' | 'version'> {
  return { nodeId: node.id, position: node.position, type: node.node.definition.type, version: node.node.definition.version };
}

function skippedStep(node: CompiledNode): StepRecord {
  return { ...baseStep(node), status: 'skipped', attempts: 0, startedAt: null, finishedAt: null };
}

/** Attempts are unknown here (the interrupt cut the retries short); at least one try had begun. */
function interruptedStep(node: CompiledNode, startedAt: Date, interrupt: RunInterrupt): StepRecord {
  const attempts = 1;
  const status = interrupt.reason === 'timeout' ? 'failed' : 'canceled';
  const code = interrupt.reason === 'timeout' ? ErrorCode.TIMEOUT : ErrorCode.CANCELED;
  return { ...baseStep(node), status, attempts, startedAt, finishedAt: new Date(), error: { code, message: interrupt.message } };
}

/** Keeps the run record bounded; the full output still went to the successors. */
function recordable(output: unknown): unknown {
  let json: string | undefined;
  try {
    json = JSON.stringify(output);
  } catch (error) {
    return { notRecorded: true, reason: `output is not JSON-serialisable: ${(error as Error).message}` };
  }
  if (json === undefined) return null;
  if (json.length > MAX_RECORDED_OUTPUT_CHARS) return { notRecorded: true, reason: `output of ${json.length} characters exceeds the record limit of ${MAX_RECORDED_OUTPUT_CHARS}` };
  return output;
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** `ctx.logger`: one child logger per node, created on first use, every line masked. */
class ScopedNodeLogger implements NodeLogger {
  private child?: Logger;

  constructor(
    private readonly root: Logger,
    private readonly request: RunRequest,
    private readonly nodeId: string,
  ) {}

  debug(message: string, fields?: Record<string, unknown>): void {
    this.write('debug', message, fields);
  }
  info(message: string, fields?: Record<string, unknown>): void {
    this.write('info', message, fields);
  }
  warn(message: string, fields?: Record<string, unknown>): void {
    this.write('warn', message, fields);
  }
  error(message: string, fields?: Record<string, unknown>): void {
    this.write('error', message, fields);
  }

  private write(level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void {
    this.child ??= this.root.child({ runId: this.request.runId, workflowId: this.request.workflowId, nodeId: this.nodeId });
    if (!this.child.isLevelEnabled(level)) return;
    const redactor = this.request.redactor;
    this.child[level]({ fields: fields ? redactor.value(fields) : undefined }, redactor.string(String(message)));
  }
}
