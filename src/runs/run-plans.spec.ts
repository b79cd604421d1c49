import type { AppConfig } from '../config/app-config';
import { SecretCipher } from '../common/secret-cipher';
import type { Run } from '../domain/run.model';
import type { WorkflowVersion } from '../domain/workflow.model';
import type { WorkflowStore } from '../domain/workflow-store.port';
import { BUILT_IN_PLUGINS, loadNodeRegistry } from '../engine/plugin-loader';
import { CACHED_VERSIONS, RunPlans } from './run-plans';

const registry = loadNodeRegistry([BUILT_IN_PLUGINS]);

/** A store of published versions, one a run, counting the reads of each. */
function versions() {
  const reads = new Map<string, number>();
  const store = {
    getVersionById: async (id: string): Promise<WorkflowVersion | null> => {
      reads.set(id, (reads.get(id) ?? 0) + 1);
      if (id === 'ver_gone') return null;
      return {
        id,
        workflowId: 'wfl_1',
        version: 1,
        createdBy: 'usr_1',
        createdAt: new Date(0),
        definition: {
          nodes: [
            { id: 'hook', type: 'webhook-trigger', version: 1, parameters: {} },
            { id: 'reply', type: 'code', version: 1, parameters: { code: `return ${JSON.stringify(id)};` } },
          ],
          edges: [{ from: 'hook', to: 'reply' }],
          variables: [],
        },
      } as WorkflowVersion;
    },
  };
  return { reads, store: store as unknown as WorkflowStore };
}

const runOf = (versionId: string) => ({ id: `run_${versionId}`, workflowId: 'wfl_1', versionId, version: 1, definition: null }) as Run;

describe('RunPlans', () => {
  const plansOver = (store: WorkflowStore) => new RunPlans(store, registry, SecretCipher.fromKey(Buffer.alloc(32, 7)), {} as AppConfig);

  it('reads and compiles a published version once, however many runs of it start together', async () => {
    const { reads, store } = versions();
    const plans = plansOver(store);
    const [first, ...others] = await Promise.all(Array.from({ length: 5 }, () => plans.forRun(runOf('ver_a'))));
    for (const other of others) expect(other).toBe(first);
    expect(await plans.forRun(runOf('ver_a'))).toBe(first);
    expect(reads.get('ver_a')).toBe(1);
    // Another version is another plan, read on its own.
    expect(await plans.forRun(runOf('ver_b'))).not.toBe(first);
    expect(reads.get('ver_b')).toBe(1);
  });

  it('keeps no failed read: a version not found is read again by its next run', async () => {
    const { reads, store } = versions();
    const plans = plansOver(store);
    await expect(Promise.all([plans.forRun(runOf('ver_gone')), plans.forRun(runOf('ver_gone'))])).rejects.toThrow(/version 1 of workflow/);
    expect(reads.get('ver_gone')).toBe(1);
    await expect(plans.forRun(runOf('ver_gone'))).rejects.toThrow(/version 1 of workflow/);
    expect(reads.get('ver_gone')).toBe(2);
    expect(plans.cached).toBe(0);
  });

  it('keeps at most CACHED_VERSIONS plans, dropping the least recently run', async () => {
    const { reads, store } = versions();
    const plans = plansOver(store);
    for (let i = 0; i < CACHED_VERSIONS + 10; i++) {
      await plans.forRun(runOf(`ver_${i}`));
      if (i % 16 === 0) await plans.forRun(runOf('ver_0')); // kept in use
    }
    expect(plans.cached).toBe(CACHED_VERSIONS);
    await plans.forRun(runOf('ver_0'));
    expect(reads.get('ver_0')).toBe(1);
    await plans.forRun(runOf('ver_1'));
    expect(reads.get('ver_1')).toBe(2);
  });
});
