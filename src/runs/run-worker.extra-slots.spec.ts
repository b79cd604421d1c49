import 'reflect-metadata';
import type { AppConfig } from '../config/app-config';
import { ON_JOB_METADATA, OnJobOptions } from '../jobs/on-job.decorator';
import { RunWorker } from './run-worker.service';

/** The slots the run worker asks for beyond its concurrency, for a process with `supervisedWorkers` worker processes. */
function extraSlotsWith(supervisedWorkers: number, callersWaiting: number): number | undefined {
  const options = Reflect.getMetadata(ON_JOB_METADATA, RunWorker.prototype.handle) as OnJobOptions;
  const worker = { events: { callersWaiting } } as never;
  return options.extraSlots?.(worker, { supervisedWorkers } as AppConfig)?.();
}

describe('RunWorker extra slots for waiting callers', () => {
  it('counts a slot for each caller waiting in a process alone', () => {
    expect(extraSlotsWith(0, 3)).toBe(3);
  });

  // A run claimed in the process where its caller waits ends there: no notice of its end relayed back.
  it('counts them beside worker processes too', () => {
    expect(extraSlotsWith(1, 3)).toBe(3);
  });
});
