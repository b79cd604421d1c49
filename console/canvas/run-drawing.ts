import type { Definition, Run, Step } from '../api-types';
import type { CanvasEdge } from './canvas';
import { edgeOutput, itemCount, outputsOf, outputValue } from './workflow-graph';

/** How a step is drawn: a node copied from the retried run is `reused`, whatever its status was. */
export const stepStatus = (step: Step | undefined): string | undefined => (step ? (step.reused ? 'reused' : step.status) : undefined);

const items = (n: number | null) => (n === null ? 'not recorded' : n === 1 ? '1 item' : `${n} items`);

/**
 * The edges of `definition` as a run went along them: the item count that left each output, and
 * `skipped` (grey, dashed) where nothing went. With `partial` (a node test, which runs a few nodes
 * only) an edge out of a node that did not run is left undecorated instead of greyed.
 */
export function runEdges(definition: Definition, run: Pick<Run, 'steps'>, partial = false): CanvasEdge[] {
  const all = definition.edges ?? [];
  const steps = new Map(run.steps.map((s) => [s.nodeId, s]));
  const byId = new Map(definition.nodes.map((n) => [n.id, n]));
  return all.map((edge, index) => {
    const from = byId.get(edge.from);
    const output = edgeOutput(edge, from, all);
    const step = steps.get(edge.from);
    const base: CanvasEdge = { index, from: edge.from, to: edge.to, output };
    if (partial && !step) return base;
    const ran = step && (step.status === 'succeeded' || (step.status === 'failed' && step.output !== undefined));
    const count = ran && from ? itemCount(outputValue(step.output, output, outputsOf(from, all))) : undefined;
    const target = steps.get(edge.to);
    const skipped = !ran || count === 0 || target?.status === 'skipped';
    return { ...base, label: count === undefined ? undefined : items(count), status: skipped ? 'skipped' : 'live' };
  });
}
