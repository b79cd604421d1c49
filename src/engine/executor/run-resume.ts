import { ErrorCode } from '../../common/app-error';
import type { StepError } from '../../domain/step.model';
import type { CompiledNode } from '../compiler/compiled-plan';
import { Execution, Suspension } from './execution';
import { isInside, outermostLoop, settle } from './graph-routing';
import { baseStep, emit, openOutputs, recordedValue } from './step-records';

/**
 * Takes back what earlier attempts of the run finished (their sealed outputs kept), so those
 * nodes are not run again; fails what must not run twice and was cut short; throws a Suspension
 * when the run is parked at a Wait node whose time has not come.
 */
export async function restore(run: Execution): Promise<void> {
  const { plan, request } = run;
  const now = request.now?.() ?? new Date();
  const unfinishedLoops = new Set<string>();
  // In plan order, so a node's predecessors are taken back (or not) before it.
  const previous = [...(request.previous ?? [])].sort(
    (a, b) => (plan.byId.get(a.nodeId)?.position ?? 0) - (plan.byId.get(b.nodeId)?.position ?? 0),
  );
  for (const step of previous) {
    const node = plan.byId.get(step.nodeId);
    if (!node) continue;
    if (node.loop !== null) {
      unfinishedLoops.add(outermostLoop(plan, node));
      continue;
    }
    // An output is only as good as its inputs: it is taken back only when every node before it
    // is too (the trigger derives its output from the input again). When one of them runs again
    // (a retry from a node that failed but let the run go on), a step a retry offered for reuse
    // runs again as well; one of this run's own is judged below, as if it had no output kept.
    const inputsKept = node.predecessors.every((id) => run.states.has(id) || id === plan.trigger.id);
    if (!inputsKept && step.reused) continue;
    const kept = inputsKept && step.state ? openOutputs(run, step) : undefined;
    if ((step.status === 'succeeded' || (step.status === 'failed' && node.onError !== 'stop')) && kept) {
      settle(run, node, kept.ports, step.status === 'failed' ? 'failed' : 'succeeded', false);
      run.steps.push(step);
    } else if (step.status === 'waiting' && kept) {
      if (kept.until && kept.until > now) {
        run.steps.push(step);
        throw new Suspension(kept.until);
      }
      settle(run, node, kept.ports, 'succeeded', false);
      // The record shows what the node ends with: an approval's record showed what it waited for.
      await emit(
        run,
        { ...step, status: 'succeeded', finishedAt: now, output: recordedValue(run, run.values[node.id] ?? null) },
        { ports: kept.ports },
      );
    } else if (step.status === 'failed' && node.onError === 'stop') {
      // Its failure stands: a node that failed is not tried again by a resumed attempt.
      settle(run, node, new Map(), 'failed', true);
      run.steps.push(step);
      run.failure ??= {
        ...(step.error ?? { code: ErrorCode.INTERNAL, message: 'failed' }),
        message: `Node "${node.id}" failed: ${step.error?.message ?? 'see its step'}`,
        nodeId: node.id,
      };
    } else if (step.status === 'running' || ((step.status === 'succeeded' || step.status === 'waiting') && !node.alwaysIdempotent)) {
      // It started (or finished, but its output was not kept) and must not run twice.
      await failInterrupted(run, node, step.startedAt);
    }
  }
  for (const loopId of unfinishedLoops) {
    if (run.states.has(loopId)) continue;
    const loop = plan.byId.get(loopId)!;
    const unsafe = plan.nodes.filter((n) => isInside(plan, n, loopId) && !n.alwaysIdempotent);
    const touched = (request.previous ?? []).some((s) => unsafe.some((n) => n.id === s.nodeId));
    if (touched) await failInterrupted(run, loop, null, `it holds node(s) that must not run twice (${unsafe.map((n) => n.id).join(', ')})`);
  }
}

async function failInterrupted(run: Execution, node: CompiledNode, startedAt: Date | null, why = 'it must not run twice'): Promise<void> {
  const error: StepError = {
    code: ErrorCode.INTERRUPTED,
    message: `The worker stopped while node "${node.id}" was running, and ${why}, so it was not run again; retry the run from the failed node if running it again is safe`,
    details: { nodeId: node.id },
  };
  await emit(run, { ...baseStep(node), status: 'failed', attempts: 1, startedAt, finishedAt: new Date(), error });
  settle(run, node, new Map(), 'failed', true);
  run.failure ??= { ...error, nodeId: node.id };
}
