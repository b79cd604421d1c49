import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { JobClaiming, JobContext, JobHandler } from '../domain/job-queue.port';
import { JOB_NAMES } from '../domain/job-names';
import { ON_JOB_METADATA, OnJobOptions } from './on-job.decorator';

/** An `@OnJob` method, as found at boot. */
export interface DiscoveredJobHandler {
  name: string;
  /** 0: this process does not run these jobs (another worker process does). */
  concurrency?: number;
  /** `Class.method`, for messages. */
  where: string;
  handle: JobHandler<unknown>;
  claiming?: JobClaiming;
  extraSlots?: () => number;
}

/** A job without a handler, a handler without a job, or two handlers for one job: the boot stops. */
export class JobHandlerError extends Error {
  constructor(problems: string[]) {
    super(`Job handlers do not match the job names (src/domain/job-names.ts):\n  ${problems.join('\n  ')}`);
    this.name = 'JobHandlerError';
  }
}

/**
 * Finds the `@OnJob` methods of the providers (src/jobs/on-job.decorator.ts) and checks them
 * against the job names once, whatever the queue: in a process that runs workers every job has
 * exactly one handler; an `api` process has none.
 */
@Injectable()
export class JobHandlerScan {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
  ) {}

  /** @throws JobHandlerError naming every job and handler that do not match. */
  handlers(): DiscoveredJobHandler[] {
    const found = this.discover();
    const problems: string[] = [];
    const known = new Set(JOB_NAMES);
    const byName = new Map<string, DiscoveredJobHandler[]>();
    for (const handler of found) {
      if (!known.has(handler.name))
        problems.push(`${handler.where} handles job "${handler.name}", which is not a known job (known: ${JOB_NAMES.join(', ')})`);
      byName.set(handler.name, [...(byName.get(handler.name) ?? []), handler]);
    }
    for (const [name, handlers] of byName) {
      if (handlers.length > 1) problems.push(`job "${name}" has ${handlers.length} handlers: ${handlers.map((h) => h.where).join(', ')}`);
    }
    if (this.config.runsWorkers) {
      for (const name of JOB_NAMES) {
        if (!byName.has(name))
          problems.push(
            `job "${name}" has no handler: a provider method marked @OnJob('${name}') (src/jobs/on-job.decorator.ts) must be provided`,
          );
      }
    } else if (found.length) {
      problems.push(`an api process runs no jobs, but provides ${found.map((h) => h.where).join(', ')}`);
    }
    if (problems.length) throw new JobHandlerError(problems);
    return found;
  }

  private discover(): DiscoveredJobHandler[] {
    const handlers: DiscoveredJobHandler[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype || prototype === Object.prototype) continue;
      for (const key of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[key] as (job: JobContext<unknown>) => Promise<void>;
        const options = this.reflector.get<(OnJobOptions & { name: string }) | undefined>(ON_JOB_METADATA, method);
        if (!options) continue;
        handlers.push({
          name: options.name,
          concurrency: typeof options.concurrency === 'function' ? options.concurrency(this.config) : options.concurrency,
          where: `${instance.constructor.name}.${key}`,
          handle: (job) => method.call(instance, job),
          ...(options.claiming ? { claiming: options.claiming(instance as never) as JobClaiming } : {}),
          ...(options.extraSlots ? { extraSlots: options.extraSlots(instance as never, this.config) } : {}),
        });
      }
    }
    return handlers;
  }
}
