import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../common/logger';
import { AppConfig } from '../config/app-config';
import { PeriodicReconciler } from '../jobs/periodic-reconciler';
import { RunStore } from '../domain/run-store.port';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Runs deleted per store call: one short write at a time, so runs being recorded never wait long. */
const BATCH = 500;
export const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Retention: finished runs older than RUNS_RETENTION_DAYS, and beyond the newest
 * RUNS_MAX_PER_WORKFLOW of their workflow, go with their steps and sealed state, at boot and
 * every ten minutes in each process that runs workers (concurrent passes delete nothing twice).
 */
@Injectable()
export class RunsPruner extends PeriodicReconciler {
  private readonly retentionMs: number;
  private readonly keepPerWorkflow: number;

  constructor(
    private readonly runs: RunStore,
    config: AppConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    super(logger.child({ component: 'runs-pruner' }), PRUNE_INTERVAL_MS);
    this.retentionMs = config.RUNS_RETENTION_DAYS * DAY_MS;
    this.keepPerWorkflow = config.RUNS_MAX_PER_WORKFLOW;
  }

  protected async reconcileOnce(now: Date): Promise<void> {
    if (!this.retentionMs && !this.keepPerWorkflow) return;
    const options = {
      ...(this.retentionMs ? { finishedBefore: new Date(now.getTime() - this.retentionMs) } : {}),
      ...(this.keepPerWorkflow ? { keepPerWorkflow: this.keepPerWorkflow } : {}),
      limit: BATCH,
    };
    let total = 0;
    let pruned: number;
    do {
      pruned = await this.runs.prune(options);
      total += pruned;
    } while (pruned >= BATCH);
    if (total) this.logger.info({ pruned: total }, 'old runs deleted');
  }
}
