import {
  CallToolResult,
  InputRequest,
  inputRequired,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  Result,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ErrorCode, isAppError } from '../common/app-error';
import { approvalForm, decisionOf } from './elicitation-forms';
import { canElicitForm, canElicitUrl, McpCall } from './mcp-call';
import type { ToolRunApproval, ToolRunRecord } from './mcp-backend.port';
import { answer, askForArguments, describeRun, isTerminal, unknownTool, withAnsweredArguments } from './workflow-calls';

/**
 * Workflow tool calls as MCP tasks, backed by the runs they start (so a task survives a restart of
 * the service: it is the run). Two wire forms of one behaviour:
 *
 * - 2025-11-25 (experimental tasks): a `tools/call` with a `task` parameter answers `{task}` at once;
 *   `tasks/get` reports the status, `tasks/result` blocks until the end (asking the client's user
 *   for an approval on the way, over the session) and answers what the call would have,
 *   `tasks/cancel` cancels the run and answers the cancelled task.
 * - 2026-07-28 (`io.modelcontextprotocol/tasks` extension): a `tools/call` from a client declaring
 *   the extension answers `resultType: "task"` at once; `tasks/get` inlines the result or the input
 *   requests (an approval's form), `tasks/update` decides the approval with the answer, and
 *   `tasks/cancel` acknowledges.
 *
 * A task id is its run's id; every task request is checked against the caller, whose own runs
 * started through a tool are the only tasks they see (`McpBackend.toolRun`).
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const POLL_INTERVAL_MS = 2000;
/** tasks/result looks at its run at least this often while it blocks. */
const RESULT_SLICE_MS = 30_000;

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The 2026-07-28 client asked for tasks on this request. */
export const wantsTasks = (call: McpCall): boolean =>
  call.era === 'modern' && (call.client.extensions as Record<string, unknown> | undefined)?.[TASKS_EXTENSION] !== undefined;

/** The approval the caller can answer through this client, or undefined. */
function askable(record: ToolRunRecord, call: McpCall): ToolRunApproval | undefined {
  const approval = record.approval;
  if (record.status !== 'waiting' || !approval?.mayDecide) return undefined;
  if (canElicitForm(call.client) && approvalForm(approval)) return approval;
  if (canElicitUrl(call.client) && approval.approvalUrl) return approval;
  return undefined;
}

function statusOf(record: ToolRunRecord, call: McpCall): TaskStatus {
  // Once cancelled, a task stays cancelled, even while its run winds down to its next step.
  if (record.status === 'canceled' || record.cancelRequested) return 'cancelled';
  // A run that failed answered the call (an isError result): the task completed.
  if (record.status === 'succeeded' || record.status === 'failed') return 'completed';
  return askable(record, call) ? 'input_required' : 'working';
}

/** The task fields of a run, in the era's spelling (ttl, pollInterval in 2025; ttlMs, pollIntervalMs in 2026). */
function taskOf(record: ToolRunRecord, call: McpCall) {
  const status = statusOf(record, call);
  const common = {
    taskId: record.runId,
    status,
    statusMessage: status === 'cancelled' ? 'Cancelled' : describeRun(record),
    createdAt: record.createdAt,
    lastUpdatedAt: record.updatedAt,
  };
  // A task is kept as long as its run.
  return call.era === 'legacy'
    ? { ...common, ttl: record.keptForMs, pollInterval: POLL_INTERVAL_MS }
    : { ...common, ttlMs: record.keptForMs, pollIntervalMs: POLL_INTERVAL_MS };
}

/** Keys of a 2026 task's input requests are unique over its life: the node and the wait it belongs to. */
const approvalKey = (approval: ToolRunApproval) => `approval-${approval.nodeId}-${Date.parse(approval.expiresAt).toString(36)}`;

function approvalRequest(approval: ToolRunApproval, call: McpCall): InputRequest {
  const form = canElicitForm(call.client) ? approvalForm(approval) : undefined;
  if (form) return inputRequired.elicit(form);
  return inputRequired.elicitUrl({
    message: `Approval needed: ${approval.summary}. Open the approval page to approve or reject (it times out at ${approval.expiresAt}).`,
    url: approval.approvalUrl!,
  });
}

/**
 * The caller's tool run behind a task id; an unknown id (or anyone else's) is InvalidParams, as the
 * specification asks. A 2026-07-28 request that did not declare the tasks extension is refused with
 * the missing capability (-32021), whatever the id.
 */
async function taskRun(call: McpCall, taskId: string): Promise<ToolRunRecord> {
  if (call.era === 'modern' && !wantsTasks(call))
    throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  try {
    return await call.backend.toolRun(taskId);
  } catch (error) {
    if (isAppError(error) && error.code === ErrorCode.NOT_FOUND) throw unknownTask(taskId);
    throw error;
  }
}

const unknownTask = (taskId: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task ${taskId}`);

/**
 * A workflow tool call that becomes a task: the run starts, then the task answers. Arguments the
 * schema refuses start nothing: a 2026 client able to fill a form is asked for them first (the
 * exchange finishes before the task exists, as the extension asks), otherwise the refusal is the
 * call's InvalidParams error, since no result can carry it in the task's place.
 */
export async function createTask(name: string, args: Record<string, unknown>, call: McpCall): Promise<Result> {
  let record: ToolRunRecord;
  try {
    record = await call.backend.startWorkflowTool(name, withAnsweredArguments(args, call));
  } catch (error) {
    if (isAppError(error) && error.code === ErrorCode.NOT_FOUND) throw unknownTool(name);
    if (isAppError(error) && error.code === ErrorCode.VALIDATION_FAILED) {
      // A 2026 client that can fill a form is asked for the arguments before the task exists.
      const ask = call.era === 'modern' ? await askForArguments(name, error, call) : undefined;
      if (ask) return ask;
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, { fields: (error.details as { fields?: unknown })?.fields });
    }
    throw error;
  }
  const task = taskOf(record, call);
  if (call.era === 'legacy') {
    return {
      task,
      _meta: { 'io.modelcontextprotocol/model-immediate-response': `Started as task ${record.runId}: ${describeRun(record)}` },
    };
  }
  return { resultType: 'task', ...task };
}

/** tasks/get: the task; on 2026-07-28 with its result, or the approval it needs answered, inline. */
export async function getTask(taskId: string, call: McpCall): Promise<Result> {
  const record = await taskRun(call, taskId);
  const task = taskOf(record, call);
  if (call.era === 'legacy') return task;
  if (task.status === 'completed') return { ...task, result: answer(record) };
  if (task.status === 'input_required') {
    const approval = askable(record, call)!;
    return { ...task, inputRequests: { [approvalKey(approval)]: approvalRequest(approval, call) } };
  }
  return task;
}

/**
 * tasks/result (2025-11-25): what the call would have answered, once the run ended. While it runs
 * this request stays open; an approval the caller may decide is asked of the client's user over the
 * session (the request carries the task), and their answer decides it.
 */
export async function taskResult(taskId: string, call: McpCall): Promise<CallToolResult> {
  const related = { [RELATED_TASK_META_KEY]: { taskId } };
  let record = await taskRun(call, taskId);
  const dismissed = new Set<string>();
  for (;;) {
    if (isTerminal(record) || record.cancelRequested) {
      if (!isTerminal(record)) record = await call.backend.waitForToolRun(taskId, RESULT_SLICE_MS);
      if (isTerminal(record)) return { ...answer(record), _meta: related };
    }
    const approval = askable(record, call);
    if (approval && call.elicit && !dismissed.has(approvalKey(approval))) {
      const request = approvalRequest(approval, call);
      const params = { ...(request.params as object), _meta: related } as Parameters<NonNullable<McpCall['elicit']>>[0];
      const reply = await call.elicit(params);
      if (params.mode === 'url') dismissed.add(approvalKey(approval));
      else {
        const decision = decisionOf(reply, approval);
        if (decision === 'dismissed' || decision === undefined) dismissed.add(approvalKey(approval));
        else await decideQuietly(call, record, approval, decision);
      }
    } else if (call.signal.aborted) {
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'The request was cancelled');
    } else {
      record = await call.backend.waitForToolRun(taskId, RESULT_SLICE_MS);
      continue;
    }
    record = await call.backend.toolRun(taskId);
  }
}

/** A decision whose refusal (decided elsewhere, timed out, fields the approval does not accept) leaves the task to go on. */
async function decideQuietly(
  call: McpCall,
  record: ToolRunRecord,
  approval: ToolRunApproval,
  decision: Exclude<ReturnType<typeof decisionOf>, 'dismissed' | undefined>,
): Promise<void> {
  try {
    await call.backend.decideApproval(record.runId, approval.nodeId, decision);
  } catch (error) {
    if (!isAppError(error) || ![ErrorCode.CONFLICT, ErrorCode.GONE, ErrorCode.VALIDATION_FAILED].includes(error.code)) throw error;
  }
}

/**
 * tasks/cancel: cancels the run (a queued or waiting one at once, a running one at its next step).
 * 2025-11-25 refuses a task that already ended and answers the cancelled task; 2026-07-28 acknowledges.
 */
export async function cancelTask(taskId: string, call: McpCall): Promise<Result> {
  const record = await taskRun(call, taskId);
  const ended = isTerminal(record) || record.cancelRequested;
  if (call.era === 'legacy') {
    if (ended) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${taskId} already ended: it is ${statusOf(record, call)}`);
    return taskOf(await cancelRun(call, taskId, record), call);
  }
  if (!ended) await cancelRun(call, taskId, record);
  return {};
}

async function cancelRun(call: McpCall, taskId: string, record: ToolRunRecord): Promise<ToolRunRecord> {
  try {
    return await call.backend.cancelToolRun(taskId);
  } catch (error) {
    // It ended between the read and the cancel: the task is what the run became.
    if (isAppError(error) && error.code === ErrorCode.CONFLICT) return record;
    throw error;
  }
}

/**
 * tasks/update (2026-07-28): the answers to a task's input requests. An answer to the approval the
 * run waits at decides it; answers to keys that are not outstanding are ignored, as the extension
 * asks. Fields the approval refuses are an InvalidParams error naming them, the key still open.
 */
export async function updateTask(taskId: string, call: McpCall): Promise<Result> {
  const record = await taskRun(call, taskId);
  const inputResponses = call.inputResponses ?? {};
  const approval = askable(record, call);
  if (!approval) return {};
  const reply = inputResponses[approvalKey(approval)];
  if (reply === undefined) return {};
  const decision = decisionOf(reply, approval);
  if (decision === 'dismissed' || decision === undefined) return {};
  try {
    await call.backend.decideApproval(record.runId, approval.nodeId, decision);
  } catch (error) {
    if (isAppError(error) && error.code === ErrorCode.VALIDATION_FAILED)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    if (!isAppError(error) || (error.code !== ErrorCode.CONFLICT && error.code !== ErrorCode.GONE)) throw error;
  }
  return {};
}

/** The params of the task methods, as the SDK checks them before a handler runs. */
export const TASK_ID_PARAMS = z.object({ taskId: z.string().min(1).max(200) });
// The SDK lifts `inputResponses` out of the params of every request (ctx.mcpReq.inputResponses).
export const TASK_UPDATE_PARAMS = TASK_ID_PARAMS;
