import { CallToolResult, InputRequiredResult, inputRequired, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { AppError, ErrorCode, FieldError, isAppError } from '../common/app-error';
import { approvalForm, argumentsForm, decisionOf } from './elicitation-forms';
import { canElicitForm, canElicitUrl, McpCall } from './mcp-call';
import type { ToolRunApproval, ToolRunRecord } from './mcp-backend.port';
import { runUri } from './resources/resource-uris';
import { toolFailure } from './tool-errors';
import type { WorkflowCallResult } from './tools/tool-listing';

/**
 * A workflow tool call that does not run as a task: it starts the run and answers with its output
 * once it ends. Along the way it reports progress when the client sent a progress token, asks the
 * client's user for an approval the run waits at (when that user may decide it and the client can
 * ask: a form, or the approval page in URL mode; otherwise the answer carries the link at once,
 * never a hang), and asks for arguments the call lacks. Asking is an `input_required` result
 * (2026-07-28), which the SDK's shim turns into elicitation requests on a 2025 session: one code
 * path for both eras, the run's id carried between rounds in the signed request state.
 */

/** What a call carries from one round to the next: the run it follows and the approval it asked about. */
export interface FollowState {
  r: string;
  n?: string;
  /** The approval page was offered (URL mode): the decision comes from there. */
  u?: 1;
}

export interface WorkflowCallOptions {
  /** How long a call without a progress token follows its run before answering that it still runs. */
  toolTimeoutMs: number;
  mintState(state: FollowState): Promise<string>;
  onUnexpectedError?(error: unknown, where: string): void;
}

/** A follower with a progress token looks at its run this often (and reports what changed). */
const PROGRESS_SLICE_MS = 2000;
/** Without a change, a progress notification still goes out this often, so a client resetting its timeout on progress keeps waiting. */
const HEARTBEAT_MS = 15_000;
/** A follower without a deadline (a progress token) that hears nothing looks again at least this often. */
const LONG_SLICE_MS = 30_000;

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);
export const isTerminal = (record: ToolRunRecord): boolean => TERMINAL.has(record.status);

export async function callWorkflowTool(
  name: string,
  args: Record<string, unknown>,
  call: McpCall,
  options: WorkflowCallOptions,
): Promise<CallToolResult | InputRequiredResult> {
  const state = call.requestState<FollowState>();
  let record: ToolRunRecord;
  try {
    if (state?.r) {
      record = await call.backend.toolRun(state.r);
      const answered = await answerApproval(record, state, call, options);
      if (answered) return answered;
      record = await call.backend.toolRun(state.r);
    } else {
      const started = await startRun(name, args, call);
      if ('answer' in started) return started.answer;
      record = started.record;
    }
  } catch (error) {
    return failure(error, name, options);
  }
  return follow(record, call, options, state?.u && state.n ? state.n : undefined);
}

/** Starts the run, asking the client's user for the arguments the schema says are missing or wrong when it can. */
async function startRun(
  name: string,
  args: Record<string, unknown>,
  call: McpCall,
): Promise<{ record: ToolRunRecord } | { answer: InputRequiredResult }> {
  try {
    return { record: await call.backend.startWorkflowTool(name, withAnsweredArguments(args, call)) };
  } catch (error) {
    // Removed, or no longer shared with the caller: a tool that is not there is a protocol error.
    if (isAppError(error) && error.code === ErrorCode.NOT_FOUND) throw unknownTool(name);
    const ask = await askForArguments(name, error, call);
    if (!ask) throw error;
    return { answer: ask };
  }
}

/** The call's arguments, with what the client's user filled in when asked for them (a retried round). */
export function withAnsweredArguments(args: Record<string, unknown>, call: McpCall): Record<string, unknown> {
  const given = call.inputResponses?.arguments as { action?: unknown; content?: unknown } | undefined;
  return given?.action === 'accept' && isObject(given.content) ? { ...args, ...given.content } : args;
}

/**
 * The form asking the client's user for the arguments a refusal names, when the client can show one,
 * the user did not already decline it, and the schema's fields fit in a form; else undefined.
 */
export async function askForArguments(name: string, error: unknown, call: McpCall): Promise<InputRequiredResult | undefined> {
  const fields = isAppError(error) && error.code === ErrorCode.VALIDATION_FAILED ? fieldsOf(error) : undefined;
  const given = call.inputResponses?.arguments as { action?: unknown } | undefined;
  if (!fields || !canElicitForm(call.client) || given?.action === 'decline' || given?.action === 'cancel') return undefined;
  const tool = (await call.backend.listWorkflowTools()).find((candidate) => candidate.name === name);
  const form = tool && argumentsForm(name, tool.inputSchema, fields);
  return form ? inputRequired({ inputRequests: { arguments: inputRequired.elicit(form) } }) : undefined;
}

export const unknownTool = (name: string) =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool ${name}: tools/list names the tools of this server`);

/**
 * On the round after the user was asked about an approval: decides it with their answer. Returns
 * the call's answer when the round ends here (the form is asked again, or the user dismissed it).
 */
async function answerApproval(
  record: ToolRunRecord,
  state: FollowState,
  call: McpCall,
  options: WorkflowCallOptions,
): Promise<CallToolResult | InputRequiredResult | undefined> {
  const approval = record.approval;
  if (!state.n || state.u || !approval || approval.nodeId !== state.n || !approval.mayDecide) return undefined;
  const decision = decisionOf(call.inputResponses?.approval, approval);
  if (decision === 'dismissed') return answer(record, true);
  if (decision === undefined) return askApproval(record, approval, call, options);
  try {
    await call.backend.decideApproval(record.runId, approval.nodeId, decision);
  } catch (error) {
    // Decided elsewhere, or timed out, meanwhile: the run goes on either way.
    if (isAppError(error) && (error.code === ErrorCode.CONFLICT || error.code === ErrorCode.GONE)) return undefined;
    if (isAppError(error) && error.code === ErrorCode.VALIDATION_FAILED)
      return askApproval(record, approval, call, options, `Not decided: ${error.message}.`);
    throw error;
  }
  return undefined;
}

/** Follows the run until it ends, asks for an approval, or (without a progress token) the time limit comes. */
async function follow(
  start: ToolRunRecord,
  call: McpCall,
  options: WorkflowCallOptions,
  offeredPage?: string,
): Promise<CallToolResult | InputRequiredResult> {
  const deadline = call.progressToken === undefined ? Date.now() + options.toolTimeoutMs : undefined;
  const progress = call.progressToken === undefined ? undefined : new ProgressReporter(call);
  let record = start;
  try {
    await progress?.report(record);
    for (;;) {
      if (isTerminal(record)) return answer(record);
      const approval = record.approval;
      if (approval?.mayDecide && approval.nodeId !== offeredPage) {
        if (canElicitForm(call.client) && approvalForm(approval)) return askApproval(record, approval, call, options);
        if (canElicitUrl(call.client) && approval.approvalUrl) return offerApprovalPage(record, approval, options);
        // The client cannot ask its user: the answer carries the link at once.
        return answer(record, true);
      }
      const left = deadline === undefined ? LONG_SLICE_MS : deadline - Date.now();
      if (left <= 0 || call.signal.aborted) return answer(record);
      record = await call.backend.waitForToolRun(record.runId, progress ? Math.min(PROGRESS_SLICE_MS, left) : left);
      await progress?.report(record);
    }
  } catch (error) {
    return failure(error, 'tools/call', options);
  }
}

async function askApproval(
  record: ToolRunRecord,
  approval: ToolRunApproval,
  call: McpCall,
  options: WorkflowCallOptions,
  notice?: string,
): Promise<InputRequiredResult | CallToolResult> {
  const form = approvalForm(approval, notice);
  if (!form || !canElicitForm(call.client)) return answer(record, true);
  return inputRequired({
    inputRequests: { approval: inputRequired.elicit(form) },
    requestState: await options.mintState({ r: record.runId, n: approval.nodeId }),
  });
}

async function offerApprovalPage(
  record: ToolRunRecord,
  approval: ToolRunApproval,
  options: WorkflowCallOptions,
): Promise<InputRequiredResult> {
  return inputRequired({
    inputRequests: {
      approval: inputRequired.elicitUrl({
        message: `Approval needed: ${approval.summary}. Open the approval page to approve or reject (it times out at ${approval.expiresAt}).`,
        url: approval.approvalUrl!,
      }),
    },
    requestState: await options.mintState({ r: record.runId, n: approval.nodeId, u: 1 }),
  });
}

/** The run's record as the call's answer: its text is the JSON of its structuredContent, and it links the run. */
export function answer(record: ToolRunRecord, withApproval = false): CallToolResult {
  const result: WorkflowCallResult = { runId: record.runId, status: record.status, output: record.output ?? null, error: record.error };
  const approval = withApproval ? record.approval : null;
  if (approval) {
    result.approval = {
      summary: approval.summary,
      expiresAt: approval.expiresAt,
      ...(approval.approvalUrl ? { approvalUrl: approval.approvalUrl } : {}),
    };
  }
  return {
    content: [
      { type: 'text', text: JSON.stringify(result) },
      {
        type: 'resource_link',
        uri: runUri(record.runId),
        name: record.runId,
        title: `Run ${record.runId}`,
        description: 'The run this call started: where it stands and its output',
        mimeType: 'application/json',
      },
    ],
    structuredContent: result,
    ...(record.status === 'succeeded' ? {} : { isError: true }),
  };
}

/** A one-line account of where a run stands, for progress messages and task status messages. */
export function describeRun(record: ToolRunRecord): string {
  const steps = `${record.progress.done} step${record.progress.done === 1 ? '' : 's'} done`;
  switch (record.status) {
    case 'queued':
      return 'Queued: the run starts shortly';
    case 'running':
      return record.progress.node ? `Running node "${record.progress.node}" (${steps})` : `Running (${steps})`;
    case 'waiting': {
      const approval = record.approval;
      if (!approval) return `Waiting at node "${record.progress.node ?? '?'}" until its time comes (${steps})`;
      if (!approval.mayDecide) return `Waiting for an editor of the workflow to approve: ${approval.summary}`;
      return `Waiting for your approval: ${approval.summary}${approval.approvalUrl ? ` (decide at ${approval.approvalUrl} before ${approval.expiresAt})` : ''}`;
    }
    case 'succeeded':
      return `Succeeded (${steps})`;
    case 'failed':
      return `Failed: ${record.error?.message ?? 'unknown error'}`;
    case 'canceled':
      return 'Canceled';
  }
}

/** notifications/progress while the run moves: what changed, and a heartbeat when nothing does. */
class ProgressReporter {
  private done = -1;
  private message = '';
  private beats = 0;
  private sentAt = 0;

  constructor(private readonly call: McpCall) {}

  async report(record: ToolRunRecord): Promise<void> {
    const message = describeRun(record);
    const advanced = record.progress.done > this.done;
    if (!advanced && message === this.message && Date.now() - this.sentAt < HEARTBEAT_MS) return;
    // The value must grow with every notification: whole steps, and fractions of one in between.
    this.beats = advanced ? 0 : this.beats + 1;
    this.done = Math.max(this.done, record.progress.done);
    this.message = message;
    this.sentAt = Date.now();
    await this.call
      .notify({
        method: 'notifications/progress',
        params: { progressToken: this.call.progressToken!, progress: this.done + this.beats / (this.beats + 1), message },
      })
      // The client went away: the call's answer finds nobody either.
      .catch(() => undefined);
  }
}

function failure(error: unknown, name: string, options: WorkflowCallOptions): CallToolResult {
  if (error instanceof ProtocolError) throw error;
  if (!isAppError(error) || error.code === ErrorCode.INTERNAL) options.onUnexpectedError?.(error, name);
  return toolFailure(error);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function fieldsOf(error: AppError): FieldError[] | undefined {
  const fields = (error.details as { fields?: FieldError[] } | undefined)?.fields;
  return fields?.length ? fields : undefined;
}
