import { Injectable } from '@nestjs/common';
import { Principal } from '../auth/principal';
import { AccessPolicy } from '../auth/access-policy.service';
import { ApiKeyService } from '../auth/api-key.service';
import { AppError } from '../common/app-error';
import { LruCache } from '../common/lru-cache';
import { ShutdownSignal } from '../common/shutdown-signal';
import type { StepRecord, StepStatus } from '../domain/step.model';
import { NodeRegistry } from '../engine/node-registry';
import { RunEvents } from './run-events';
import { Run, RunStatus, TERMINAL_RUN_STATUSES } from '../domain/run.model';
import { RunStore } from '../domain/run-store.port';
import { WorkflowStore } from '../domain/workflow-store.port';
import { CACHED_VERSIONS } from './run-plans';
import { AcceptedRun, RunsService } from './runs.service';

const CHAT_TRIGGER = 'chat-trigger';
/** How often a stream looks at the run's step records (which also covers runs another process executes). */
const STEP_POLL_MS = 250;
/** How often a stream reads its key again from the store (another process may have revoked it). */
const KEY_CHECK_MS = 1000;
/** A stream watches a run at most this long (one parked at a Wait node may take hours): then it says where the run stands and ends. */
const CHAT_STREAM_MAX_MS = 10 * 60 * 1000;
/** The JSON mode waits at most this long for the answer; then it says where the run stands (202). */
const CHAT_WAIT_MS = 120 * 1000;
/** Step statuses a stream reports: a node that finished, or parked the run. */
const REPORTED_STEP_STATUSES: readonly StepStatus[] = ['succeeded', 'failed', 'skipped', 'canceled', 'waiting'];
/** Fields of an object output that hold the answer's text, in the order they are looked at. */
const ANSWER_FIELDS = ['answer', 'text', 'output', 'content'] as const;

export interface ChatAnswer {
  runId: string;
  status: RunStatus;
  answer: string | null;
  output: unknown;
  error: { code: string; message: string; nodeId?: string } | null;
}

/** What a message to a published version is checked against: the version's number and its nodes' types. */
interface VersionNodes {
  version: number;
  nodes: { type: string; version?: number }[];
}

/** What a stream sends: the event's name and its JSON data. */
type ChatEmit = (event: 'run' | 'step' | 'substep' | 'token' | 'done' | 'error', data: unknown) => void;

/**
 * The text of a chat answer, from a run's output: the output itself when it is a string, else
 * its `answer`, `text`, `output` or `content` field, the first that is a string; a one-element
 * array counts as its element (a node in run mode `item`). Null when none is.
 */
export function answerText(output: unknown): string | null {
  const value = Array.isArray(output) && output.length === 1 ? (output[0] as unknown) : output;
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const field of ANSWER_FIELDS) {
      const text = (value as Record<string, unknown>)[field];
      if (typeof text === 'string') return text;
    }
  }
  return null;
}

function chatAnswer(run: Run): ChatAnswer {
  const output = run.output ?? null;
  return {
    runId: run.id,
    status: run.status,
    answer: run.status === 'succeeded' ? answerText(output) : null,
    output,
    error: run.error
      ? { code: run.error.code, message: run.error.message, ...(run.error.nodeId ? { nodeId: run.error.nodeId } : {}) }
      : null,
  };
}

const stepEvent = (step: StepRecord) => ({
  nodeId: step.nodeId,
  type: step.type,
  status: step.status,
  attempts: step.attempts,
  durationMs: step.startedAt && step.finishedAt ? step.finishedAt.getTime() - step.startedAt.getTime() : null,
  error: step.error ?? null,
});

/**
 * Chat with a published workflow whose trigger is `chat-trigger`: each message starts a run of
 * the active version as the caller (who needs the editor role, as for the webhook) with
 * `{sessionId, message}` as input; the answer is streamed while the run goes, or waited for.
 */
@Injectable()
export class ChatService {
  /** Published versions' node types (a type and version a node), as many versions as run plans keep. */
  private readonly versionNodes = new LruCache<string, VersionNodes>(CACHED_VERSIONS);

  constructor(
    private readonly runsService: RunsService,
    private readonly runs: RunStore,
    private readonly workflows: WorkflowStore,
    private readonly access: AccessPolicy,
    private readonly registry: NodeRegistry,
    private readonly events: RunEvents,
    private readonly shutdown: ShutdownSignal,
    private readonly apiKeys: ApiKeyService,
  ) {}

  /**
   * @throws AppError CONFLICT when the workflow has no published version (as the webhook answers) or when the
   * published version's trigger is not chat-trigger
   */
  async start(
    principal: Principal,
    workflowId: string,
    message: { sessionId: string; message: string },
    idempotencyKey?: string,
  ): Promise<AcceptedRun> {
    // The workflow with the caller's role, in one read, every time (a role removed a moment ago counts
    // at once); before anything about the workflow is told, a caller without a role hears "not found".
    const read = await this.workflows.startable(workflowId, principal.userId);
    if (!read) throw AppError.notFound('workflow', workflowId);
    this.access.check(read.role, 'workflow', workflowId, 'editor');
    const { workflow } = read;
    const version = workflow.activeVersionId ? await this.triggers(workflow.activeVersionId) : null;
    if (!version) {
      throw AppError.conflict(
        `Workflow ${workflowId} has no published version to chat with: give it a ${CHAT_TRIGGER} node and publish it`,
      );
    }
    const trigger = version.nodes.find((node) => this.registry.get(node.type, node.version)?.definition.trigger);
    if (trigger?.type !== CHAT_TRIGGER) {
      throw AppError.conflict(
        `Workflow ${workflowId} cannot chat: its published version ${version.version} starts with ${trigger ? trigger.type : 'no known trigger'}, not ${CHAT_TRIGGER}; make ${CHAT_TRIGGER} its trigger and publish it`,
        { trigger: trigger?.type ?? null, version: version.version },
      );
    }
    return this.runsService.startChat(principal, workflow, { sessionId: message.sessionId, message: message.message }, idempotencyKey);
  }

  /**
   * The number and node types of published version `versionId`, which never change: read (and its
   * whole definition parsed) once a version, not once a message. Null when the version is gone.
   */
  private async triggers(versionId: string): Promise<VersionNodes | null> {
    const cached = this.versionNodes.get(versionId);
    if (cached) return cached;
    const version = await this.workflows.getVersionById(versionId);
    if (!version) return null;
    const nodes: VersionNodes = {
      version: version.version,
      nodes: version.definition.nodes.map(({ type, version: nodeVersion }) => ({ type, version: nodeVersion })),
    };
    this.versionNodes.set(versionId, nodes);
    return nodes;
  }

  /** The answer once the run finished, or where it stands after CHAT_WAIT_MS (or when the service begins to stop). */
  async wait(runId: string): Promise<ChatAnswer> {
    const run = (await this.runsService.waitFor(runId, CHAT_WAIT_MS)) ?? (await this.runs.get(runId));
    if (!run) throw AppError.notFound('run', runId);
    return chatAnswer(run);
  }

  /**
   * Streams what the run does until it ends: its nodes' progress in this process as it comes
   * (`substep`, `token`; from linked processes too, not from processes that are not linked), each
   * step as its record says it finished (`step`, read every STEP_POLL_MS, so runs of another
   * process are followed too, and at once when a process not linked to this one commits to the
   * store), then `done` with the answer.
   * Stops early, without `done`, when `gone` aborts (the client left: the run goes on); after
   * CHAT_STREAM_MAX_MS or when the service begins to stop, `done` says where the run stands. The
   * key the stream was opened with (`keyId`) is followed as MCP streams follow theirs: revoked in
   * this process, or found revoked in the store (read every KEY_CHECK_MS), the stream ends with an
   * `error` event and no more of the run is told.
   */
  async stream(runId: string, emit: ChatEmit, gone: AbortSignal, keyId: string | null = null): Promise<void> {
    const revoked = new AbortController();
    const unsubscribe = this.events.onProgress(runId, (event) => {
      if (revoked.signal.aborted) return;
      if (event.type === 'token') emit('token', { nodeId: event.nodeId, text: event.text });
      else emit('substep', { nodeId: event.nodeId, subStep: event.subStep });
    });
    const stopFollowingKey = keyId ? this.apiKeys.onRevoked((id) => id === keyId && revoked.abort()) : () => undefined;
    let keyCheckedAt = Date.now();
    const reported = new Map<string, StepStatus>();
    const deadline = Date.now() + CHAT_STREAM_MAX_MS;
    const wake = AbortSignal.any([gone, this.shutdown.signal, revoked.signal]);
    // The finished run, when its end was told in this process with it (RunEvents.finished): not read again.
    let handed: Run | undefined;
    try {
      for (;;) {
        if (gone.aborted) return;
        if (keyId && !revoked.signal.aborted && Date.now() - keyCheckedAt >= KEY_CHECK_MS) {
          keyCheckedAt = Date.now();
          if (!(await this.apiKeys.isStillValid(keyId))) revoked.abort();
        }
        if (revoked.signal.aborted) {
          emit('error', { code: 'UNAUTHENTICATED', message: `The API key of this stream was revoked: read run ${runId} with a valid key` });
          return;
        }
        const run = handed ?? (await this.runs.get(runId));
        if (!run) throw AppError.notFound('run', runId);
        for (const step of run.steps) {
          if (REPORTED_STEP_STATUSES.includes(step.status) && reported.get(step.nodeId) !== step.status) {
            reported.set(step.nodeId, step.status);
            emit('step', stepEvent(step));
          }
        }
        if (TERMINAL_RUN_STATUSES.includes(run.status) || Date.now() >= deadline || this.shutdown.stopping) {
          if (!gone.aborted) emit('done', chatAnswer(run));
          return;
        }
        const told = await this.events.nextFinish(runId, STEP_POLL_MS, wake);
        if (typeof told === 'object') handed = told;
      }
    } finally {
      unsubscribe();
      stopFollowingKey();
    }
  }
}
