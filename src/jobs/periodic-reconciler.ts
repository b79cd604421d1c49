import { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * Nothing accepted is lost: work the store holds but no queue job carries (an enqueue that failed
 * after the insert, a queue that lost its data, a worker that died) is put back in the queue by a
 * pass that runs at boot and then every `intervalMs` in each process that runs workers. Passes
 * never overlap, and stores' conditional updates plus idempotent job ids make concurrent passes of
 * several processes harmless.
 */
export abstract class PeriodicReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private pass?: Promise<void>;

  protected constructor(
    protected readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  /** One pass over what may have lost its job. */
  protected abstract reconcileOnce(now: Date): Promise<void>;

  onApplicationBootstrap(): void {
    void this.reconcile();
    this.timer = setInterval(() => void this.reconcile(), this.intervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.pass;
  }

  /** One pass; overlapping calls share the pass in progress. A failed pass is logged and retried next time. */
  reconcile(now = new Date()): Promise<void> {
    this.pass ??= this.reconcileOnce(now)
      .catch((error: Error) => this.logger.warn({ err: error }, 'reconciliation failed; trying again at the next pass'))
      .finally(() => (this.pass = undefined));
    return this.pass;
  }
}
