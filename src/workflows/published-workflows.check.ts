import { Inject, Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { AppError, ErrorCode, FieldError } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { AppConfig } from '../config/app-config';
import { NodeRegistry } from '../engine/node-registry';
import { compileWorkflow } from '../engine/workflow-compiler';
import { ReadinessRegistry } from '../health/readiness.registry';
import { WorkflowStore } from '../domain/workflow-store.port';

/** Problems shown per workflow in /health/ready: enough to act on, not a dump. */
const MAX_PROBLEMS = 5;

interface BrokenWorkflow {
  workflowId: string;
  name: string;
  versionId: string;
  problems: FieldError[];
}

/**
 * Checks, once at boot, every published version in force against the node types this process
 * loaded: a plugin removed or changed since it was published is reported in the log and in
 * /health/ready (`workflows`: details only, readiness still passes) instead of first failing a run.
 * The count of published workflows there is read at each probe.
 */
@Injectable()
export class PublishedWorkflowsCheck implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger: Logger;
  private result: { checked: number; broken: BrokenWorkflow[] } | null = null;
  private failure: string | null = null;

  constructor(
    private readonly workflows: WorkflowStore,
    private readonly registry: NodeRegistry,
    private readonly readiness: ReadinessRegistry,
    private readonly config: AppConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'workflows' });
  }

  onModuleInit(): void {
    this.readiness.register({ name: 'workflows', check: () => this.details() });
  }

  /** In the background: a store with many workflows does not hold the boot up. */
  onApplicationBootstrap(): void {
    void this.check().catch((error: unknown) => {
      this.failure = error instanceof Error ? error.message : String(error);
      this.logger.warn({ err: error }, 'published workflows could not be checked against the loaded node types');
    });
  }

  /**
   * The published workflows as they stand now (published or unpublished since boot, in any
   * process), and those found broken at boot whose broken version is still the one in force.
   */
  private async details(): Promise<Record<string, unknown>> {
    if (this.failure) return { checked: false, error: this.failure };
    if (!this.result) return { checking: true };
    const active = await this.workflows.listActive();
    const inForce = new Set(active.map((workflow) => workflow.versionId));
    return { published: active.length, broken: this.result.broken.filter((workflow) => inForce.has(workflow.versionId)) };
  }

  async check(): Promise<{ checked: number; broken: BrokenWorkflow[] }> {
    const options = { aiDecide: Boolean(this.config.LLM_URL), fixedTriggerParameters: true };
    const broken: BrokenWorkflow[] = [];
    const active = await this.workflows.listActive();
    for (const { workflowId, name, versionId } of active) {
      const version = await this.workflows.getVersionById(versionId);
      if (!version) continue;
      try {
        compileWorkflow(version.definition, this.registry, options);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== ErrorCode.VALIDATION_FAILED) throw error;
        const problems = (
          (error.details as { fields?: FieldError[] } | undefined)?.fields ?? [{ field: 'definition', reason: error.message }]
        ).slice(0, MAX_PROBLEMS);
        broken.push({ workflowId, name, versionId, problems });
        this.logger.warn(
          { workflowId, versionId, version: version.version, problems },
          'a published workflow no longer fits the loaded node types: its runs will fail until it is fixed and published again, or the plugin is back',
        );
      }
    }
    this.result = { checked: active.length, broken };
    this.logger.info({ published: active.length, broken: broken.length }, 'published workflows checked against the loaded node types');
    return this.result;
  }
}
