import { ErrorCode } from '../../common/app-error';
import { isRoutedOutput, isWaitRequest, NodeInput } from '../../sdk';
import type { CompiledNode, CompiledWorkflow } from '../compiler/compiled-plan';
import type { Execution, NodeResult, NodeState } from './execution';
import { StepFailure } from './step-failure';

// Where data goes between nodes: which outputs a result reaches, which edges are live, what a
// node receives, and the run's answer. The states of the nodes are kept here and nowhere else.

/** A node's outcome in this run; its value is what `nodes.<id>` reads when the node ran (or failed without blocking). */
export function settle(
  run: Execution,
  node: CompiledNode,
  ports: Map<string, unknown>,
  status: NodeState['status'],
  blocking: boolean,
): void {
  const value = node.outputs.length === 1 ? (ports.get(node.outputs[0]) ?? null) : Object.fromEntries(ports);
  run.states.set(node.id, { status, ports, value, blocking });
  if (status === 'succeeded' || (status === 'failed' && !blocking)) run.values[node.id] = value;
}

/** Forgets a node's outcome: a loop body's nodes before each iteration. */
export function unsettle(run: Execution, node: CompiledNode): void {
  run.states.delete(node.id);
  delete run.values[node.id];
}

/** Succeeded, or failed and let the run go on (onError continue or errorOutput): its outputs are live. */
const ran = (state: NodeState | undefined): state is NodeState =>
  state !== undefined && (state.status === 'succeeded' || (state.status === 'failed' && !state.blocking));

export function isLive(run: Execution, from: string, output: string): boolean {
  const state = run.states.get(from);
  return ran(state) && state.ports.has(output);
}

/** Live edges and their data; `blocked` when a node the edges come from failed (or stopped) for good. */
export function incomingOf(run: Execution, node: CompiledNode): { inputs: NodeInput[]; input: unknown; blocked: boolean } {
  let blocked = false;
  const inputs = node.incoming.map(({ from, output }): NodeInput => {
    const state = run.states.get(from);
    if (state?.blocking || state?.status === 'canceled') blocked = true;
    const live = isLive(run, from, output);
    return { from, output, live, data: live ? state!.ports.get(output) : undefined };
  });
  const live = inputs.filter((i) => i.live);
  return { inputs, input: live.length === 1 ? live[0].data : live.map((i) => i.data), blocked };
}

/** Run mode input: a routed result goes where it says; a plain one to the first output; a wait keeps its output. */
export function routeInput(node: CompiledNode, output: unknown): Pick<NodeResult, 'ports' | 'waitUntil' | 'decision'> {
  if (isWaitRequest(output)) {
    // What the wait ends with may itself be routed (an approval's timedOut output).
    const { ports } = isRoutedOutput(output.output)
      ? routeInput(node, output.output)
      : { ports: new Map([[node.outputs[0], output.output]]) };
    return { ports, waitUntil: output.until, ...(output.decision ? { decision: { pending: output.decision.pending } } : {}) };
  }
  if (!isRoutedOutput(output)) return { ports: new Map([[node.outputs[0], output]]) };
  return { ports: new Map(Object.entries(output.outputs).map(([name, value]) => [checkOutput(node, name), value])) };
}

/** Run mode item: each item's result goes to its outputs; an output's value is the array of what it received. */
export function routeItems(node: CompiledNode, outputs: unknown[]): Pick<NodeResult, 'ports' | 'waitUntil'> {
  const ports = new Map<string, unknown[]>();
  let waitUntil: Date | undefined;
  const send = (name: string, value: unknown) => {
    const list = ports.get(name);
    if (list) list.push(value);
    else ports.set(name, [value]);
  };
  for (const output of outputs) {
    if (isWaitRequest(output)) {
      if (output.decision)
        throw new StepFailure(
          {
            code: ErrorCode.NODE_CONFIGURATION,
            message: `Node "${node.id}" waits for a decision, which it takes once for its whole input: set its run mode to input`,
            details: { nodeId: node.id },
          },
          1,
        );
      if (!waitUntil || output.until > waitUntil) waitUntil = output.until;
      send(node.outputs[0], output.output);
    } else if (isRoutedOutput(output)) {
      for (const [name, value] of Object.entries(output.outputs)) send(checkOutput(node, name), value);
    } else {
      send(node.outputs[0], output);
    }
  }
  // No items at all: the first output is an empty list, as a node over an empty array always gave.
  if (outputs.length === 0) ports.set(node.outputs[0], []);
  return { ports: ports as Map<string, unknown>, ...(waitUntil ? { waitUntil } : {}) };
}

function checkOutput(node: CompiledNode, name: string): string {
  if (node.outputs.includes(name)) return name;
  throw new StepFailure(
    {
      code: ErrorCode.NODE_CONFIGURATION,
      message: `Node "${node.id}" sent a result to output "${name}", which it does not have (outputs: ${node.outputs.join(', ')})`,
      details: { nodeId: node.id },
    },
    1,
  );
}

/**
 * A succeeded run's answer: the output of the last Respond-type node that ran; else the output of
 * the run's end, a node outside loop bodies that ran and sent nothing along any edge (it has none,
 * or none from an output that received data); with several ends, their outputs keyed by node id,
 * in execution order. Undefined when nothing ran to an end.
 */
export function runOutput(run: Execution): unknown {
  let respond: CompiledNode | undefined;
  let ends: CompiledNode[] | undefined;
  for (const node of run.plan.nodes) {
    const state = run.states.get(node.id);
    if (node.loop !== null || !ran(state)) continue;
    if (node.node.definition.respond) respond = node;
    else if (!sentAlongAnEdge(node, state)) (ends ??= []).push(node);
  }
  if (respond) return run.values[respond.id];
  if (!ends) return undefined;
  return ends.length === 1 ? run.values[ends[0].id] : Object.fromEntries(ends.map((node) => [node.id, run.values[node.id]]));
}

function sentAlongAnEdge(node: CompiledNode, state: NodeState): boolean {
  for (const output of node.linkedOutputs) if (state.ports.has(output)) return true;
  return false;
}

/** The node is in the body of `loopId`, directly or inside a loop nested in it. */
export function isInside(plan: CompiledWorkflow, node: CompiledNode, loopId: string): boolean {
  for (let loop = node.loop; loop !== null; loop = plan.byId.get(loop)!.loop) if (loop === loopId) return true;
  return false;
}

export function outermostLoop(plan: CompiledWorkflow, node: CompiledNode): string {
  let loop = node.loop!;
  while (plan.byId.get(loop)!.loop !== null) loop = plan.byId.get(loop)!.loop!;
  return loop;
}
