import {
  defineNode,
  DURATION_UNITS,
  MAX_PAUSE_MS,
  NodeConfigurationError,
  NodeUpstreamError,
  toOutput,
  waitForDecision,
} from 'workflow-collection-service/sdk';
import { ApprovalParameters } from './approval.parameters';

export { ApprovalParameters };

/** The outputs a decision (or its absence) sends the run along. */
const APPROVAL_OUTPUTS = ['approved', 'rejected', 'timedOut'] as const;

export default defineNode({
  type: 'approval',
  version: 1,
  displayName: 'Approval',
  description:
    "Pauses the run until a person approves or rejects (through a signed one-time link, the console's Approvals inbox or POST /api/v1/runs/:id/approvals/:nodeId), or the timeout passes. " +
    "While it waits, its step shows the summary and when it expires; the approval link goes to the notify URL and the editors' inbox. Its output: the decision, who made it, when, the fields filled in, a comment, and the node's input.",
  parameters: ApprovalParameters,
  defaultRunMode: 'input',
  outputs: APPROVAL_OUTPUTS,
  async execute(ctx) {
    if (ctx.runMode !== 'input')
      throw new NodeConfigurationError('An approval is one decision for the whole input: set its run mode to input');
    const { summary, fields, timeout, timeoutUnit, notifyUrl, notifyCredential } = ctx.params;
    const ms = timeout * DURATION_UNITS[timeoutUnit];
    if (ms > MAX_PAUSE_MS) throw new NodeConfigurationError(`An approval waits ${MAX_PAUSE_MS / DURATION_UNITS.days} days at the most`);
    // At least a second, so that a link can be opened at all.
    const expiresAt = new Date(Date.now() + Math.max(ms, 1000));
    const approvalUrl = ctx.approvals.link(expiresAt);
    // The link is a capability: it goes to the notify URL and to editors' inbox, never into the run
    // record, which viewers read too.
    const pending = { status: 'pending', summary, fields: fields ?? null, expiresAt: expiresAt.toISOString() };
    if (notifyUrl) {
      const body = JSON.stringify({
        summary,
        approvalUrl,
        expiresAt: pending.expiresAt,
        runId: ctx.runId,
        workflowId: ctx.workflowId,
        nodeId: ctx.nodeId,
      });
      const response = await ctx.http.fetch(notifyUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        ...(notifyCredential ? { credential: notifyCredential } : {}),
      });
      if (response.status >= 300) {
        throw new NodeUpstreamError(`The notify URL answered ${response.status}: the approver was not told`, { status: response.status });
      }
    }
    const timedOut = {
      decision: 'timedOut',
      decidedBy: null,
      decidedAt: null,
      fields: null,
      comment: null,
      summary,
      expiresAt: pending.expiresAt,
      input: ctx.input,
    };
    return waitForDecision(expiresAt, pending, toOutput('timedOut', timedOut));
  },
});
