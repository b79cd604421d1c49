import { Injectable } from '@nestjs/common';
import { AccessPolicy } from '../auth/access-policy.service';
import { AppError, ErrorCode, isAppError } from '../common/app-error';
import type { Role } from '../domain/membership.model';
import { SERVICE_TRIGGERS } from '../domain/run.model';
import type { Run, RunType } from '../domain/run.model';
import { UserStore } from '../domain/user-store.port';
import { WorkflowStore } from '../domain/workflow-store.port';
import type { Workflow } from '../domain/workflow.model';

/**
 * Who vouched for what a run of `workflow` executes, i.e. whose rights it may act with when nobody
 * calls for it (a schedule's tick, an error workflow) or when the caller did not write it (a
 * sub-workflow): for `production` the user who put the active version in force (published it or
 * activated it again), for `test` the user who saved the draft last. Null when nobody is known
 * (nothing published; a draft saved before this was kept).
 */
export async function userInForce(workflows: WorkflowStore, workflow: Workflow, runType: RunType): Promise<string | null> {
  if (runType === 'test') return workflow.draftSavedBy;
  if (!workflow.activeVersionId) return null;
  return workflow.activatedBy ?? (await workflows.getVersionById(workflow.activeVersionId))?.createdBy ?? null;
}

/** The role a run's acting user must hold on its workflow for the run to act: viewer for an MCP tool call, editor otherwise. */
export function roleToAct(run: Pick<Run, 'trigger'>): Role {
  return run.trigger === 'mcp' ? 'viewer' : 'editor';
}

/**
 * The one check that a user may still act in a run: they hold `minimum` on the workflow and still
 * have an API key that is not revoked (a user whose keys were all revoked acts nowhere, neither by
 * a schedule nor in a run that resumes after a wait).
 */
@Injectable()
export class RunActors {
  constructor(
    private readonly access: AccessPolicy,
    private readonly users: UserStore,
  ) {}

  /**
   * @throws AppError FORBIDDEN saying who, on what and why, with `context` first ("This schedule
   * run") and `remedy` last
   */
  async assertMayAct(userId: string, workflowId: string, minimum: Role, context: string, remedy = ''): Promise<void> {
    try {
      await this.access.require({ userId }, 'workflow', workflowId, minimum);
    } catch (error) {
      if (!isAppError(error)) throw error;
      throw new AppError(
        ErrorCode.FORBIDDEN,
        `${context} acts as user ${userId}, who no longer holds the ${minimum} role on workflow ${workflowId}${remedy}`,
        { details: { actingUserId: userId, workflowId } },
      );
    }
    const keys = await this.users.listApiKeys(userId);
    if (!keys.some((key) => key.revokedAt === null)) {
      throw new AppError(ErrorCode.FORBIDDEN, `${context} acts as user ${userId}, whose API keys were all revoked${remedy}`, {
        details: { actingUserId: userId, workflowId },
      });
    }
  }

  /**
   * Rights are checked again while a run lives. A run the service started acts as whoever put its
   * version in force, and starts only while that user may still act (editor, a key not revoked):
   * otherwise a user removed from the workflow would go on acting through its schedule. A run that
   * goes on after a wait, an approval or a lost worker does so only while its acting user still
   * holds the role its start needed.
   */
  async assertRunMayAct(run: Run): Promise<void> {
    if (SERVICE_TRIGGERS.includes(run.trigger)) {
      await this.assertMayAct(
        run.actingUserId,
        run.workflowId,
        'editor',
        `This ${run.trigger} run`,
        ': an editor must publish or activate a version again',
      );
    } else if (run.steps.length > 0) {
      await this.assertMayAct(run.actingUserId, run.workflowId, roleToAct(run), `This ${run.trigger} run, going on after a pause,`);
    }
  }
}
