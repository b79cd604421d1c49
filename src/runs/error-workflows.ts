import type { Logger } from 'pino';
import type { Run } from '../domain/run.model';
import type { RunError } from '../domain/step.model';
import type { WorkflowStore } from '../domain/workflow-store.port';
import type { RunAdmission } from './run-admission.service';

/** What starting an error workflow needs of the run worker. */
export interface ErrorWorkflowStarter {
  workflows: WorkflowStore;
  admission: RunAdmission;
  logger: Logger;
  /** The error workflow the failed run's workflow names in its settings, if any. */
  errorWorkflowOf: (workflowId: string) => Promise<string | undefined>;
}

/**
 * A failed production run of a workflow that names an error workflow starts that workflow's
 * published version, once (keyed by the failed run), as a run of the service. An error workflow's
 * own failure starts nothing: no chains, no loops.
 */
export async function startErrorWorkflow(
  { workflows, admission, logger, errorWorkflowOf }: ErrorWorkflowStarter,
  run: Run,
  error: RunError | null,
  finishedAt: Date,
): Promise<void> {
  if (run.runType !== 'production' || run.trigger === 'error-workflow' || run.parentRunId) return;
  const errorWorkflowId = await errorWorkflowOf(run.workflowId);
  if (!errorWorkflowId) return;
  try {
    const [workflow, failing] = await Promise.all([workflows.get(errorWorkflowId), workflows.get(run.workflowId)]);
    if (!workflow?.activeVersionId) {
      logger.warn({ runId: run.id, errorWorkflowId }, 'the error workflow has no published version: nothing started');
      return;
    }
    const input = {
      workflow: { id: run.workflowId, name: failing?.name ?? null },
      run: {
        id: run.id,
        runType: run.runType,
        trigger: run.trigger,
        startedAt: run.startedAt?.toISOString() ?? null,
        finishedAt: finishedAt.toISOString(),
      },
      error,
    };
    const started = await admission.startForService(workflow, 'error-workflow', input, `error-of:${run.id}`);
    logger.info({ runId: run.id, errorWorkflowId, errorRunId: started.run.id }, 'error workflow started');
  } catch (cause) {
    logger.warn({ runId: run.id, errorWorkflowId, err: cause }, 'the error workflow could not be started');
  }
}
