import pino from 'pino';
import { ShutdownSignal } from '../common/shutdown-signal';
import { Run, RunStatus } from '../domain/run.model';
import { RunStore } from '../domain/run-store.port';
import { UnwatchedStoreCommits } from '../domain/store-commits.port';
import { RunEvents } from './run-events';
import { RunsService } from './runs.service';

/** A store of one run that counts the reads a waiter makes. */
function oneRunStore(runId: string) {
  const reads = { status: 0, get: 0 };
  let status: RunStatus = 'queued';
  const store = {
    status: async (id: string) => (reads.status++, id === runId ? status : null),
    get: async (id: string) => (reads.get++, id === runId ? ({ id, status } as Run) : null),
  };
  return { reads, store: store as unknown as RunStore, set: (next: RunStatus) => (status = next) };
}

function service(store: RunStore, events: RunEvents): RunsService {
  const none = {} as never;
  return new RunsService(store, none, none, none, none, none, events, pino({ level: 'silent' }), none, new ShutdownSignal(), none);
}

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('RunsService.waitFor', () => {
  let events: RunEvents;

  beforeEach(() => {
    events = new RunEvents(new UnwatchedStoreCommits());
    // No wake but the ones each test makes: a fallback look at the store would add reads.
    events.fallbackMs = 60_000;
  });

  afterEach(() => events.onModuleDestroy());

  it('told in this process that the run ended, reads the run once, not its status first', async () => {
    const { reads, store, set } = oneRunStore('run_1');
    const waiting = service(store, events).waitFor('run_1', 10_000);
    await turns();
    expect(reads).toEqual({ status: 1, get: 0 });

    set('succeeded');
    events.finished('run_1');

    await expect(waiting).resolves.toMatchObject({ id: 'run_1', status: 'succeeded' });
    expect(reads).toEqual({ status: 1, get: 1 });
  });

  it('told of an end the store does not show (a lost lease), goes on waiting, and answers at the next', async () => {
    const { reads, store, set } = oneRunStore('run_2');
    const waiting = service(store, events).waitFor('run_2', 10_000);
    await turns();

    set('running');
    events.finished('run_2');
    await turns();
    expect(reads).toEqual({ status: 1, get: 1 });

    set('failed');
    events.finished('run_2');
    await expect(waiting).resolves.toMatchObject({ id: 'run_2', status: 'failed' });
    expect(reads).toEqual({ status: 1, get: 2 });
  });

  it('woken by its own look at the store (nothing told), reads the status first, as before', async () => {
    const { reads, store, set } = oneRunStore('run_3');
    events.fallbackMs = 20;
    const waiting = service(store, events).waitFor('run_3', 10_000);
    await turns();
    set('canceled');

    await expect(waiting).resolves.toMatchObject({ id: 'run_3', status: 'canceled' });
    expect(reads.status).toBeGreaterThanOrEqual(2);
    expect(reads.get).toBe(1);
  });
});
