import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { JOB_PROCESS_METADATA, JOB_PROCESSOR_METADATA, JobProcessOptions } from './job-handler.decorators';
import { BoundJobHandler, JobDelivery } from './job-queue.port';
import { JOB_NAMES } from './job-names';

/** A `@Process` method of a `@Processor` class, as found at boot. */
export interface DiscoveredJobHandler extends BoundJobHandler {
  /** `Class.method`, for messages. */
  where: string;
  queue: string;
}

/** A job without a handler, a handler without a job, or two handlers for one job: the boot stops. */
export class JobHandlerError extends Error {
  constructor(problems: string[]) {
    super(`Job handlers do not match the job names (src/jobs/job-names.ts):\n  ${problems.join('\n  ')}`);
    this.name = 'JobHandlerError';
  }
}

/**
 * Finds the job handlers by decorator (src/jobs/job-handler.decorators.ts), as BullModule's
 * explorer does with its own metadata, and checks them against the
 * job names once, whatever the queue: in a process that runs workers every job has exactly one
 * handler, on the queue of the same name; an `api` process has none (BullModule would run them).
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
      if (!known.has(handler.name)) problems.push(`${handler.where} handles job "${handler.name}", which is not a known job (known: ${JOB_NAMES.join(', ')})`);
      else if (handler.queue !== handler.name) problems.push(`${handler.where} handles job "${handler.name}" on queue "${handler.queue}": each job has the queue of its name`);
      byName.set(handler.name, [...(byName.get(handler.name) ?? []), handler]);
    }
    for (const [name, handlers] of byName) {
      if (handlers.length > 1) problems.push(`job "${name}" has ${handlers.length} handlers: ${handlers.map((h) => h.where).join(', ')}`);
    }
    if (this.config.runsWorkers) {
      for (const name of JOB_NAMES) {
        if (!byName.has(name)) problems.push(`job "${name}" has no handler: a @Processor('${name}') class with a @Process({ name: '${name}' }) method (src/jobs/job-handler.decorators.ts) must be provided`);
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
      const type = !wrapper.metatype || wrapper.inject ? instance?.constructor : wrapper.metatype;
      if (!instance || typeof type !== 'function') continue;
      const queue = this.reflector.get<string | undefined>(JOB_PROCESSOR_METADATA, type);
      if (queue === undefined) continue;
      for (const key of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
        const method = instance[key] as (delivery: JobDelivery<unknown>) => Promise<void>;
        const options = this.reflector.get<JobProcessOptions | undefined>(JOB_PROCESS_METADATA, method);
        if (!options) continue;
        handlers.push({
          name: options.name,
          queue,
          concurrency: options.concurrency ?? 1,
          where: `${type.name}.${key}`,
          call: (delivery) => method.call(instance, delivery),
        });
      }
    }
    return handlers;
  }
}
