import pino from 'pino';
import { processNotices } from '../common/process-notices';
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
    get: async (id: string) => (
      reads.get++,
      id === runId
        ? ({ id, status, createdAt: new Date(), startedAt: null, finishedAt: null, resumeAt: null, steps: [] } as unknown as Run)
        : null
    ),
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

  it('handed the finished run by its end in this process, answers with it and reads nothing more', async () => {
    const { reads, store } = oneRunStore('run_7');
    const waiting = service(store, events).waitFor('run_7', 10_000);
    await turns();
    // What the worker asks the store's complete for: a caller waits here now.
    expect(events.awaited('run_7')).toBe(true);
    expect(events.awaited('run_other')).toBe(false);

    const finished = { id: 'run_7', status: 'succeeded', steps: [{ nodeId: 'a' }] } as unknown as Run;
    events.finished('run_7', finished);

    await expect(waiting).resolves.toBe(finished);
    expect(reads).toEqual({ status: 1, get: 0 });
    expect(events.awaited('run_7')).toBe(false);
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

  it('follows its run once while it waits, however often it wakes (each wait for the next end adds no watch of its own)', async () => {
    const { store, set } = oneRunStore('run_6');
    const watch = jest.spyOn(processNotices, 'watch');
    try {
      const waiting = service(store, events).waitFor('run_6', 10_000);
      await turns();
      // Told of ends the store does not show yet (a lost lease): it reads, and waits again.
      set('running');
      for (let i = 0; i < 3; i++) {
        events.finished('run_6');
        await turns();
      }
      set('succeeded');
      events.finished('run_6');
      await expect(waiting).resolves.toMatchObject({ status: 'succeeded' });
      expect(watch.mock.calls.filter(([runId]) => runId === 'run_6')).toHaveLength(1);
    } finally {
      watch.mockRestore();
    }
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

  it('counts a ?wait caller from before its run is stored until it is answered (the run worker gives it a slot)', async () => {
    const { store, set } = oneRunStore('run_4');
    const runs = service(store, events);
    let countedWhileStored = -1;
    // The run's accept (admission, the store's write and its job's enqueue, which wakes the worker's claim).
    jest.spyOn(runs as never as { startAs: () => Promise<unknown> }, 'startAs').mockImplementation(async () => {
      countedWhileStored = events.callersWaiting;
      return { created: true, body: { runId: 'run_4' }, workflowName: 'w' };
    });
    const answered = runs.start({} as never, 'wf_1', { runType: 'production', input: {} }, { waitSeconds: 10 });
    await turns();
    expect(countedWhileStored).toBe(1);
    expect(events.callersWaiting).toBe(1);

    set('succeeded');
    events.finished('run_4');
    await expect(answered).resolves.toMatchObject({ finished: { id: 'run_4', status: 'succeeded' } });
    expect(events.callersWaiting).toBe(0);
  });

  /** A webhook call with `?wait=1` for `runId`, its accept stubbed as in the test above. */
  const waitedFor = (store: RunStore, runId: string) => {
    const runs = service(store, events);
    jest.spyOn(runs as never as { startAs: () => Promise<unknown> }, 'startAs').mockResolvedValue({
      created: true,
      body: { id: runId, runId, status: 'queued' },
      workflowName: 'w',
    });
    return runs.start({} as never, 'wf_1', { runType: 'production', input: {} }, { waitSeconds: 1 });
  };

  it('answers a ?wait caller whose time ran out with the status the run has then, not the one it was accepted with', async () => {
    const { store, set } = oneRunStore('run_8');
    set('running');
    await expect(waitedFor(store, 'run_8')).resolves.toEqual({
      created: true,
      body: { id: 'run_8', runId: 'run_8', status: 'running' },
      workflowName: 'w',
    });
  });

  it('answers a ?wait caller with the record of a run that ended after the wait gave up, before its status was read', async () => {
    const { store, set } = oneRunStore('run_9');
    set('running');
    const statuses: RunStatus[] = ['running', 'running', 'succeeded'];
    // Running at the wait's first look and at its last, ended by the next.
    const ending = Object.assign(Object.create(store) as RunStore, {
      status: async () => {
        const status = statuses.shift() ?? 'succeeded';
        set(status);
        return status;
      },
    });
    await expect(waitedFor(ending, 'run_9')).resolves.toMatchObject({ finished: { id: 'run_9', status: 'succeeded' } });
  });

  it('counts a caller waiting with waitFor (chat, MCP tool calls) while it waits, and not after it timed out', async () => {
    const { store } = oneRunStore('run_5');
    const waiting = service(store, events).waitFor('run_5', 30);
    expect(events.callersWaiting).toBe(1);
    await expect(waiting).resolves.toBeNull();
    expect(events.callersWaiting).toBe(0);
  });
});
