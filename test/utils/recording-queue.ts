import { EnqueueOptions, JobHandler, JobQueue, JobState, QueueDepth } from '../../src/domain/job-queue.port';

/** A JobQueue that runs nothing: records what is enqueued; `states` says what state() answers per job id (default: missing). */
export class RecordingQueue extends JobQueue {
  readonly enqueued: { name: string; data: unknown; jobId?: string }[] = [];
  readonly states = new Map<string, JobState>();

  async enqueue<T>(name: string, data: T, options?: EnqueueOptions): Promise<string> {
    this.enqueued.push({ name, data, jobId: options?.jobId });
    this.states.set(options!.jobId!, 'waiting');
    return options!.jobId!;
  }
  process<T>(_name: string, _handler: JobHandler<T>): void {}
  async state(_name: string, jobId: string): Promise<JobState> {
    return this.states.get(jobId) ?? 'missing';
  }
  depth(_name: string): Promise<QueueDepth> {
    throw new Error('RecordingQueue keeps no depth');
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}
