import type { WorkflowSettings } from '../domain/workflow.model';
import type { WorkflowStore } from '../domain/workflow-store.port';
import { WorkflowSettingsCache } from './workflow-settings-cache';

/** A store of one workflow whose settings the test changes, counting the reads. */
function oneWorkflow() {
  const state = { reads: 0, settings: { maxConcurrentRuns: 2 } as WorkflowSettings, fail: false };
  const store = {
    settings: async (id: string) => {
      state.reads++;
      if (state.fail) throw new Error('store down');
      return id === 'wfl_1' ? state.settings : undefined;
    },
  };
  return { state, store: store as unknown as WorkflowStore };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('WorkflowSettingsCache', () => {
  let now: number;

  beforeEach(() => {
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
  });

  afterEach(() => jest.restoreAllMocks());

  it('reads the settings again ahead of their expiry, so a workflow in steady use never finds them expired', async () => {
    const { state, store } = oneWorkflow();
    const cache = new WorkflowSettingsCache(store);
    await cache.get('wfl_1');
    expect(state.reads).toBe(1);

    // Early in their life: answered from the cache, nothing read.
    now += 1_000;
    expect(cache.fresh('wfl_1')).toEqual({ settings: { maxConcurrentRuns: 2 }, until: expect.any(Number) });
    await settle();
    expect(state.reads).toBe(1);

    // Near their end: still answered, and read again in the background, once however often asked.
    state.settings = { maxConcurrentRuns: 5 };
    now += 800;
    expect(cache.fresh('wfl_1')?.settings).toEqual({ maxConcurrentRuns: 2 });
    expect(cache.fresh('wfl_1')?.settings).toEqual({ maxConcurrentRuns: 2 });
    expect(state.reads).toBe(1); // not inside the caller's code (it may be inside a transaction)
    await settle();
    expect(state.reads).toBe(2);

    // Past the first read's expiry: the second read's settings, the changed limit among them.
    now += 1_000;
    expect(cache.fresh('wfl_1')?.settings).toEqual({ maxConcurrentRuns: 5 });
  });

  it('a workflow not asked for near the end of its settings still finds them expired, and a failed read ahead lets them expire', async () => {
    const { state, store } = oneWorkflow();
    const cache = new WorkflowSettingsCache(store);
    await cache.get('wfl_1');
    now += 2_000;
    expect(cache.fresh('wfl_1')).toBeUndefined();

    await cache.get('wfl_1');
    state.fail = true;
    now += 1_900;
    expect(cache.fresh('wfl_1')).toBeDefined();
    await settle();
    expect(state.reads).toBe(3);
    now += 200;
    expect(cache.fresh('wfl_1')).toBeUndefined();
    await expect(cache.get('wfl_1')).rejects.toThrow('store down');
  });
});
