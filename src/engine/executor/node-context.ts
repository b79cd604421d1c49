import type { Logger } from 'pino';
import type { CodeSandbox, NodeContext, NodeInput, NodeLogger, NodeProgress, NodeSubStep } from '../../sdk';
import { runShare } from '../../jobs/fair-turns';
import type { SubStep } from '../../domain/step.model';
import { nodeMcpClients } from '../../model-and-tool-servers/mcp-clients/node-mcp-clients';
import type { CompiledNode } from '../compiler/compiled-plan';
import { UnavailableCredentials } from '../node-credentials.port';
import { nodeHttpClient, NodeHttpRun } from '../node-http-client';
import { nodeLanguageModels } from '../../model-and-tool-servers/openai-compatible/node-language-models';
import { NO_APPROVALS, NO_LANGUAGE_MODEL, NO_MEMORY, NO_SANDBOX, NO_WORKFLOWS } from '../node-services';
import { nodeMemory } from '../conversation-memory';
import type { Binding, Execution, NodeShared } from './execution';
import { recordedSubStep } from './step-records';
import type { ExecutorDependencies, RunRequest } from './run-contract';

// `ctx`, all a node may use: what one execution of a node shares across its items and tries, and
// the context of one try. A new facility of `ctx` is added here, and nowhere else.

/** Made once per execution of a node: the outputs before it (frozen), its inputs, and the services acting for the run. */
export function sharedFor(deps: ExecutorDependencies, run: Execution, node: CompiledNode, inputs: readonly NodeInput[]): NodeShared {
  const { request } = run;
  return {
    nodes: Object.freeze({ ...run.values }),
    inputs,
    // The run's user's facade and fair share do not change while it runs: made at its first node, not at each.
    collections: (run.collections ??= deps.collections.forUser(request.actingUserId)),
    logger: new ScopedNodeLogger(deps.logger, request, node.id),
    workflows: request.workflows?.(node.id) ?? NO_WORKFLOWS,
    approvals: deps.approvalLinks
      ? { link: (expiresAt) => deps.approvalLinks!.url({ runId: request.runId, nodeId: node.id, expiresAt }) }
      : NO_APPROVALS,
    progress: progressOf(run, node.id),
    memory: deps.conversations ? nodeMemory(deps.conversations, request.workflowId, node.id, request.actingUserId) : NO_MEMORY,
    sandbox: (run.sandbox ??= sandboxOf(deps, request)),
  };
}

/** `ctx.sandbox`, whose evaluations wait in the run's fair turn for a busy sandbox process. */
function sandboxOf(deps: ExecutorDependencies, request: RunRequest): CodeSandbox {
  const { sandbox } = deps;
  if (!sandbox) return NO_SANDBOX;
  const share = runShare(request);
  return { run: (code, scope, signal, about) => sandbox.run(code, scope, signal, { ...about, share }) };
}

/**
 * `ctx.progress`: a sub-step is masked with the run's masks as they stand (a credential used by the
 * call it describes has joined them), kept for the node's step record, and told to whoever follows
 * the run; a token is masked and told.
 */
function progressOf(run: Execution, nodeId: string): NodeProgress {
  const { request } = run;
  return {
    subStep(step: NodeSubStep) {
      const recorded: SubStep = recordedSubStep(run, step);
      let kept = run.subSteps.get(nodeId);
      if (!kept) run.subSteps.set(nodeId, (kept = []));
      kept.push(recorded);
      request.progress?.({ nodeId, type: 'substep', subStep: recorded });
    },
    token(text: string) {
      if (request.progress && text) request.progress({ nodeId, type: 'token', text: request.redactor.string(text) });
    },
  };
}

/** The context of one try: `signal` ends with the try's time limit, and so does every call made through `http`. */
export function contextFor(
  deps: ExecutorDependencies,
  run: Execution,
  node: CompiledNode,
  binding: Binding,
  params: object,
  shared: NodeShared,
  signal: AbortSignal,
): NodeContext<object> {
  const http = nodeHttpClient(deps.fetcher, signal, (run.httpRun ??= httpRunOf(deps, run)));
  const { request } = run;
  // Stored one by one on a new object, in the order the binding's fields and then the others always
  // had: Object.assign of these twenty-odd properties (like a literal beginning with a spread, which
  // cost 25 us a try on Node 20) leaves an object in dictionary mode, 1 us to build and slower to read.
  const ctx: Record<string, unknown> = {};
  ctx.runMode = binding.runMode;
  if (binding.runMode === 'item') {
    ctx.item = binding.item;
    ctx.itemIndex = binding.itemIndex;
  } else {
    ctx.input = binding.input;
    if (binding.loop) ctx.loop = binding.loop;
  }
  ctx.params = params;
  ctx.variables = request.variables;
  ctx.nodes = shared.nodes;
  ctx.inputs = shared.inputs;
  ctx.collections = shared.collections;
  ctx.logger = shared.logger;
  ctx.workflows = shared.workflows;
  ctx.approvals = shared.approvals;
  ctx.progress = shared.progress;
  ctx.memory = shared.memory;
  ctx.sandbox = shared.sandbox;
  ctx.models = nodeLanguageModels(deps.models ?? NO_LANGUAGE_MODEL, http);
  ctx.http = http;
  ctx.mcp = nodeMcpClients(http);
  ctx.mask = run.mask ??= <T>(value: T) => request.redactor.value(value) as T;
  ctx.signal = signal;
  ctx.runId = request.runId;
  ctx.workflowId = request.workflowId;
  ctx.nodeId = node.id;
  return ctx as unknown as NodeContext<object>;
}

/**
 * What ctx.http needs of the run: its user's credentials (resolved once per run) and its masks, which
 * they join. Made at the run's first node try and kept in `run.httpRun`: it reads the run's request and
 * masks as they stand at each call, so every try of the run can share it (four closures a try fewer).
 */
function httpRunOf(deps: ExecutorDependencies, run: Execution): NodeHttpRun {
  const { request } = run;
  return {
    credential: (id) => {
      let resolved = run.credentials.get(id);
      if (!resolved) {
        const use = { kind: request.test || request.runType === 'test' ? ('test' as const) : ('run' as const), runId: request.runId };
        resolved = deps.credentials
          ? deps.credentials.resolve(request.actingUserId, id, use)
          : new UnavailableCredentials().resolve(request.actingUserId, id, use);
        // A refusal is not cached: the user may be given the role while the run goes on.
        resolved.catch(() => run.credentials.delete(id));
        run.credentials.set(id, resolved);
      }
      return resolved;
    },
    reveal: (secrets) => {
      run.credentialMasks = run.credentialMasks.with(secrets);
      request.redactor = request.redactor.with(secrets);
    },
    redactor: () => request.redactor,
  };
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
