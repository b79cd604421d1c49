import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CronExpressionParser } from 'cron-parser';
import type { Logger } from 'pino';
import { AppError } from '../common/app-error';
import { ROOT_LOGGER } from '../common/logger';
import { ScheduledWorkflow, WorkflowStore } from '../domain/workflow-store.port';
import { RunAdmission } from './run-admission.service';

/** What the scheduler reads the time from: the system clock, or a test's. */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

export interface SchedulerOptions {
  /** How often the list of scheduled workflows is read again (publishes in other processes). */
  refreshMs: number;
  /** The longest the scheduler sleeps between two looks at the clock. */
  maxSleepMs: number;
  /** A tick missed by more than this (the service was down) is not made up for. */
  catchUpMs: number;
}

export const SCHEDULER_OPTIONS = Symbol('SCHEDULER_OPTIONS');
/** The list is read every second (one indexed query): a schedule published in any process starts at its next tick. */
export const DEFAULT_SCHEDULER_OPTIONS: SchedulerOptions = { refreshMs: 1_000, maxSleepMs: 1_000, catchUpMs: 60_000 };

/**
 * Starts the runs of workflows whose published version has a schedule trigger. Every process
 * that runs workers looks at the same clock and the same schedules; a tick's run is created with
 * the tick's time as idempotency key, which the run store refuses twice, so each tick starts one
 * run however many processes saw it (with Bull too: the store decides, not the queue).
 */
@Injectable()
export class WorkflowScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  private schedules: ScheduledWorkflow[] = [];
  private refreshedAt = 0;
  /**
   * Up to where the ticks of each schedule in force were handled, by workflow and version. Made
   * again from the schedules at each refresh: a schedule no longer in force is forgotten (a key per
   * version ever published would only grow), and one seen again starts from then, as a new one does.
   */
  private handledUntil = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private pass?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly workflows: WorkflowStore,
    private readonly admission: RunAdmission,
    private readonly clock: Clock,
    @Inject(SCHEDULER_OPTIONS) private readonly options: SchedulerOptions,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'scheduler' });
  }

  onApplicationBootstrap(): void {
    this.loop();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
  }

  /** Starts the runs of every tick up to now that was not handled yet; returns how many it created. */
  async tick(now = this.clock.now()): Promise<number> {
    if (now.getTime() - this.refreshedAt >= this.options.refreshMs) {
      this.schedules = await this.workflows.listScheduled();
      this.refreshedAt = now.getTime();
      const handled = new Map<string, number>();
      for (const scheduled of this.schedules) {
        const until = this.handledUntil.get(keyOf(scheduled));
        if (until !== undefined) handled.set(keyOf(scheduled), until);
      }
      this.handledUntil = handled;
    }
    let created = 0;
    for (const scheduled of this.schedules) {
      const key = keyOf(scheduled);
      // A schedule seen for the first time counts from when its version came in force: its first
      // tick is not lost to the time it took this process to read the list.
      const since = scheduled.schedule.since ? Date.parse(scheduled.schedule.since) : now.getTime();
      const from = Math.max(this.handledUntil.get(key) ?? Math.min(since, now.getTime()), now.getTime() - this.options.catchUpMs);
      for (const at of ticksBetween(scheduled, from, now.getTime())) {
        const started = await this.startScheduled(scheduled.workflowId, scheduled.schedule.versionId, at, now).catch((error: unknown) => {
          // Over a queued-run limit the tick is skipped (counted in workflow_runs_refused_total): the
          // next tick comes, and a schedule never piles runs onto a backlog.
          const refusal = error instanceof AppError ? (error.details as { reason?: string } | undefined)?.reason : undefined;
          const message = refusal ? `scheduled tick skipped: ${refusal}` : 'scheduled run could not start';
          this.logger.warn({ workflowId: scheduled.workflowId, scheduledAt: at.toISOString(), err: error }, message);
          return null;
        });
        if (started?.created) {
          created++;
          this.logger.info(
            { workflowId: scheduled.workflowId, runId: started.runId, scheduledAt: at.toISOString() },
            'scheduled run started',
          );
        }
      }
      this.handledUntil.set(key, now.getTime());
    }
    return created;
  }

  /**
   * A scheduled tick of a workflow's published version, acting as whoever put that version in
   * force. The tick's time is the idempotency key, so every process that sees the tick may call
   * this and one run starts.
   */
  private async startScheduled(
    workflowId: string,
    versionId: string,
    scheduledAt: Date,
    firedAt: Date,
  ): Promise<{ created: boolean; runId: string } | null> {
    const workflow = await this.workflows.get(workflowId);
    // Republished or deleted since the schedule was read: the new version's schedule decides.
    if (!workflow || workflow.activeVersionId !== versionId) return null;
    const input = { scheduledAt: scheduledAt.toISOString(), firedAt: firedAt.toISOString() };
    const accepted = await this.admission.startForService(workflow, 'schedule', input, `schedule:${scheduledAt.toISOString()}`, firedAt);
    return { created: accepted.created, runId: accepted.run.id };
  }

  private loop(): void {
    if (this.stopped) return;
    this.pass = this.tick()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'scheduler pass failed'))
      .then(() => undefined)
      .finally(() => {
        if (this.stopped) return;
        this.timer = setTimeout(() => this.loop(), this.options.maxSleepMs);
        this.timer.unref();
      });
  }
}

const keyOf = (scheduled: ScheduledWorkflow): string => `${scheduled.workflowId}:${scheduled.schedule.versionId}`;

/** The schedule's ticks in (from, to], at most a few: a burst after a pause is not replayed in full. */
function ticksBetween(scheduled: ScheduledWorkflow, from: number, to: number): Date[] {
  const ticks: Date[] = [];
  const expression = CronExpressionParser.parse(scheduled.schedule.cron, { currentDate: new Date(from), tz: scheduled.schedule.timezone });
  while (ticks.length < 10) {
    const next = expression.next().toDate();
    if (next.getTime() > to) break;
    ticks.push(next);
  }
  return ticks;
}
