import { AppError, ErrorCode } from '../common/app-error';
import { newId } from '../common/ids';
import type { RunError, StepRecord } from './step.model';
import type { WorkflowDefinition } from './workflow-definition.model';
import type { StartableWorkflow, Workflow } from './workflow.model';

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type TerminalRunStatus = Extract<RunStatus, 'succeeded' | 'failed' | 'canceled'>;
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'canceled'];
export const RUN_TYPES = ['test', 'production'] as const;
export type RunType = (typeof RUN_TYPES)[number];

/**
 * How a run started, which also says whose rights it acts with: a caller's run (`webhook`,
 * `console`, `mcp`, `retry`, `node-test`, `chat`) acts as the caller; a run the service starts
 * (`schedule`, `error-workflow`) acts as the user who put the version in force (published or
 * activated it); a `sub-workflow` run acts as its parent run.
 */
export const RUN_TRIGGERS = [
  'webhook',
  'console',
  'mcp',
  'schedule',
  'retry',
  'error-workflow',
  'sub-workflow',
  'node-test',
  'chat',
] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];
/** Started by the service itself, not by a caller: the acting user must still hold the editor role when the run starts. */
export const SERVICE_TRIGGERS: readonly RunTrigger[] = ['schedule', 'error-workflow'];

export interface Run {
  id: string;
  workflowId: string;
  runType: RunType;
  /** The published version a production run executes; null for a test run. */
  versionId: string | null;
  version: number | null;
  /** The draft a test run executes, frozen when the run was accepted; null for production runs. */
  definition: WorkflowDefinition | null;
  status: RunStatus;
  /** The webhook body's `input`; undefined when it had none. Masked when `sealedInput` is set. */
  input: unknown;
  /**
   * Sealed like a step's `state` (never shown): the input as given and the secret values `input`
   * was masked with, for a sub-workflow run whose input held secrets of the run that started it.
   * The run executes with that input and masks its records with those secrets as well as its own.
   */
  sealedInput: string | null;
  /** The user whose API key started the run. */
  startedBy: string;
  trigger: RunTrigger;
  /** The user whose rights the nodes act with. */
  actingUserId: string;
  idempotencyKey: string | null;
  /** The queue job currently carrying the run (the run id, or a later one after a requeue). */
  jobId: string;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  /** How many times a worker claimed the run: its first start, each resume after a wait, each start after a worker stopped or was lost. */
  claims: number;
  /**
   * How many times the run's worker was lost (its lease ran out) and the run was queued again:
   * what gives a run up, where claims also count the resumes of a run that waits.
   */
  leaseLosses: number;
  cancelRequested: boolean;
  error: RunError | null;
  /** While `waiting`: when the run goes on. */
  resumeAt: Date | null;
  /** The output of the last node the run executed, masked; set when it finishes (not in lists). */
  output?: unknown;
  /** A sub-workflow run: the run and node that started it; `depth` counts the ancestors. */
  parentRunId: string | null;
  parentNodeId: string | null;
  depth: number;
  /** The run this one retries. */
  retryOf: string | null;
  /** A test of one node of the draft: only it runs (on the run's input), and with `andAfter` what follows it. */
  nodeTest: { nodeId: string; andAfter: boolean } | null;
  /** Filled by `get` and `claim` (with their sealed state); empty in lists. */
  steps: StepRecord[];
}

/** The error of a run canceled while still queued. */
export const CANCELED_BEFORE_START: RunError = { code: ErrorCode.CANCELED, message: 'The run was canceled before it started' };

/** The error of a run canceled while parked at a Wait node (whose step ends canceled too). */
export const canceledWhileWaiting = (nodeId: string): RunError => ({
  code: ErrorCode.CANCELED,
  message: `The run was canceled while waiting at node "${nodeId}"`,
  nodeId,
});

/** What the caller decides about a run it accepts; everything else starts the same for every run. */
export type NewRun = Pick<
  Run,
  'workflowId' | 'runType' | 'versionId' | 'version' | 'definition' | 'input' | 'startedBy' | 'actingUserId' | 'idempotencyKey' | 'trigger'
> &
  Partial<Pick<Run, 'parentRunId' | 'parentNodeId' | 'depth' | 'retryOf' | 'steps' | 'sealedInput' | 'nodeTest'>>;

/** A run just accepted: `queued`, carried by a job whose id is the run's. */
export function newQueuedRun(fields: NewRun, now = new Date()): Run {
  const id = newId('run');
  return {
    id,
    parentRunId: null,
    parentNodeId: null,
    depth: 0,
    retryOf: null,
    nodeTest: null,
    steps: [],
    sealedInput: null,
    ...fields,
    status: 'queued',
    jobId: id,
    createdAt: now,
    startedAt: null,
    finishedAt: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    claims: 0,
    leaseLosses: 0,
    cancelRequested: false,
    error: null,
    resumeAt: null,
  };
}

/**
 * The part of a new run that depends on the workflow and the run type: what it executes. A run of
 * the published version needs no draft (StartableWorkflow: what WorkflowStore.startable reads).
 */
export function runOf(
  workflow: StartableWorkflow & Partial<Pick<Workflow, 'draft'>>,
  runType: RunType,
): Pick<NewRun, 'workflowId' | 'runType' | 'versionId' | 'version' | 'definition'> {
  if (runType === 'test' && !workflow.draft) throw new Error(`a test run of workflow ${workflow.id} needs its draft, which was not read`);
  if (runType === 'production' && !workflow.activeVersionId) {
    throw AppError.conflict(`Workflow ${workflow.id} has no published version: publish it, or start a test run`);
  }
  return {
    workflowId: workflow.id,
    runType,
    versionId: runType === 'production' ? workflow.activeVersionId : null,
    version: runType === 'production' ? workflow.activeVersion : null,
    definition: runType === 'test' ? workflow.draft! : null,
  };
}
