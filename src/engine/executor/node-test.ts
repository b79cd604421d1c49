import type { CompiledWorkflow } from '../compiler/compiled-plan';
import type { Execution } from './execution';

/**
 * A test of one node (n8n's partial execution): the node runs on the input it is given, then,
 * with `andAfter`, what follows it; every other node counts as not run, without a record, so the
 * nodes after it see nothing from outside the test. Loop bodies are tested through their loop.
 */
export function narrowToTest(run: Execution, plan: CompiledWorkflow, test: { nodeId: string; andAfter: boolean }): void {
  const kept = new Set([test.nodeId]);
  if (test.andAfter) {
    // Plan order is a topological order: one pass finds every node reachable from the tested one.
    for (const node of plan.nodes)
      if (node.predecessors.some((id) => kept.has(id)) || (node.loop !== null && kept.has(node.loop))) kept.add(node.id);
  }
  for (const node of plan.nodes) {
    if (!kept.has(node.id)) run.states.set(node.id, { status: 'skipped', ports: new Map(), value: null, blocking: false });
  }
}
