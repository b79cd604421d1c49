import { ErrorCode } from '../../common/app-error';
import { type RecordedJson, type StepRecord, type StepStatus, type SubStep } from '../../domain/step.model';
import type { NodeSubStep } from '../../sdk';
import type { CompiledNode } from '../compiler/compiled-plan';
import type { RunInterrupt } from '../run-interrupt';
import type { Execution, NodeResult } from './execution';
import type { KeptOutputs, RunOutcome, StateSealer } from './run-contract';

/** Largest stored output of one step; larger ones are replaced by a note (successors still get all of it). */
export const MAX_RECORDED_OUTPUT_CHARS = 1024 * 1024;
/** Largest sealed state of one step: beyond it, a resumed run runs the node again (or fails, if it must not). */
export const MAX_STATE_CHARS = 16 * 1024 * 1024;

/** Every record goes out through here: kept in the outcome, and handed to the listener (the worker's store). */
export async function emit(run: Execution, step: StepRecord, keep?: KeptOutputs): Promise<void> {
  const subSteps = run.subSteps.get(step.nodeId);
  if (subSteps?.length) {
    run.subSteps.delete(step.nodeId);
    step = { ...step, subSteps };
  }
  // The texts go to the store's writer only: the outcome keeps the values (StepRecord.json).
  if (step.json) {
    const { json: _texts, ...kept } = step;
    run.steps.push(kept);
  } else run.steps.push(step);
  await run.listener.finished(step, keep);
}

/**
 * A node's kept outputs as a step's `state`, sealed; null when too large to keep (a resumed run
 * then runs the node again, or fails it if it must not run twice). `open` reads it back.
 */
export function sealOutputs(sealer: StateSealer, kept: KeptOutputs): string | null {
  if (kept.inRecord === 'ports') return IN_OUTPUT;
  if (kept.inRecord === 'single') return `${IN_OUTPUT}:${[...kept.ports.keys()][0]}`;
  let sealed: string;
  try {
    sealed = sealer.seal({ ports: [...kept.ports], ...(kept.until ? { until: kept.until.toISOString() } : {}) });
  } catch {
    // Outputs JSON cannot hold (nested past the stack's depth: a set node's dotted path, an answer
    // of a server): kept as a state too large is, not at all, rather than failing the run's job.
    return null;
  }
  return sealed.length > MAX_STATE_CHARS ? null : sealed;
}

/**
 * A step's `state` when its recorded output holds its kept outputs exactly: `output` (the output
 * is the object of its ports) or `output:<port>` (the output is that one port's). Sealing them
 * would hide nothing the record does not show, and cost a cipher (about 10 us a state in a run).
 */
const IN_OUTPUT = 'output';

/**
 * The outputs a resumed run can take back from a node's step (`step`, as finishedStep made it):
 * marked as held by the record when its output is the very value the node gave (see inRecord).
 */
export function keptOutputs(node: CompiledNode, ports: Map<string, unknown>, step: StepRecord): KeptOutputs {
  const recorded = step.json?.output;
  if (!recorded) return { ports };
  const { of } = recorded;
  if (node.outputs.length === 1) {
    const only = node.outputs[0];
    return ports.size === 1 && ports.has(only) && of === ports.get(only) ? { ports, inRecord: 'single' } : { ports };
  }
  // The object finishedStep made of the ports, unless masking copied it: each port's value itself.
  if (typeof of !== 'object' || of === null || Object.keys(of).length !== ports.size) return { ports };
  for (const [name, value] of ports) {
    if (value === undefined || !Object.prototype.hasOwnProperty.call(of, name) || (of as Record<string, unknown>)[name] !== value)
      return { ports };
  }
  return { ports, inRecord: 'ports' };
}

/** A step's `state` opened again: read from its output, or unsealed (undefined when the request has no sealer). */
export function openOutputs(run: Execution, step: Pick<StepRecord, 'state' | 'output'>): KeptOutputs | undefined {
  const state = step.state!;
  if (state === IN_OUTPUT) return { ports: new Map(Object.entries((step.output ?? {}) as Record<string, unknown>)) };
  if (state.startsWith(`${IN_OUTPUT}:`)) return { ports: new Map([[state.slice(IN_OUTPUT.length + 1), step.output ?? null]]) };
  return run.request.sealer ? openKept(run.request.sealer, state) : undefined;
}

/** What `sealOutputs` sealed, opened with the same sealer. */
export function openKept(sealer: StateSealer, sealed: string): KeptOutputs {
  const state = sealer.open(sealed) as { ports: [string, unknown][]; until?: string };
  return { ports: new Map(state.ports), ...(state.until ? { until: new Date(state.until) } : {}) };
}

export function baseStep(node: CompiledNode): Pick<StepRecord, 'nodeId' | 'position' | 'type' | 'version'> {
  return { nodeId: node.id, position: node.position, type: node.node.definition.type, version: node.node.definition.version };
}

/** `input` is already recorded (masked and capped): see recordedWithJson. */
export function finishedStep(run: Execution, node: CompiledNode, startedAt: Date, result: NodeResult, input: Recorded): StepRecord {
  const value = node.outputs.length === 1 ? (result.ports.get(node.outputs[0]) ?? null) : Object.fromEntries(result.ports);
  const output = recordedWithJson(run, value);
  // Assigned onto baseStep's new object rather than spread into a literal: see contextFor (node-context.ts).
  return Object.assign(baseStep(node), {
    status: result.error ? ('failed' as const) : ('succeeded' as const),
    attempts: result.attempts,
    startedAt,
    finishedAt: new Date(),
    input: input.value,
    output: output.value,
    error: result.error,
    json: { input: input.json, output: output.json },
  });
}

/** Attempts are unknown here (the interrupt cut the retries short); at least one try had begun. */
export function interruptedStep(node: CompiledNode, startedAt: Date, interrupt: RunInterrupt): StepRecord {
  const attempts = 1;
  const status: StepStatus = interrupt.reason === 'timeout' ? 'failed' : 'canceled';
  const code = interrupt.reason === 'timeout' ? ErrorCode.TIMEOUT : ErrorCode.CANCELED;
  return Object.assign(baseStep(node), {
    status,
    attempts,
    startedAt,
    finishedAt: new Date(),
    error: { code, message: interrupt.message },
  });
}

/** A value as a record keeps it, with the JSON text the size check made of it (none for a note standing in for it). */
export interface Recorded {
  value: unknown;
  json?: RecordedJson;
}

/** A node's input or output as its record keeps it: secrets masked, size capped. */
export function recordedValue(run: Execution, value: unknown): unknown {
  return recordedWithJson(run, value).value;
}

/**
 * recordedValue with its text, for a record's `json` (the store writes the text rather than serialise
 * the value again). A value recorded again before any node ran since (a node's output, as the next
 * node's input) takes what the first recording made: a step's output is serialised once.
 */
export function recordedWithJson(run: Execution, value: unknown): Recorded {
  const { redactor } = run.request;
  const last = run.lastRecorded;
  if (last !== undefined && last.value === value && last.redactor === redactor) return last.recorded;
  const recorded = recordedJson(redactor.value(value));
  run.lastRecorded = { value, redactor, recorded };
  return recorded;
}

/** Keeps the run record bounded; the full output still went to the successors. */
export function recordable(output: unknown): unknown {
  return recordedJson(output).value;
}

/**
 * A run's output as its record keeps it (`masked`: the outcome's output masked with the run's masks):
 * when masking left it as it was and a step's record already made its text (RunOutcome.outputText),
 * it was serialised and its size checked then, and is not serialised again.
 */
export function boundOutput(outcome: Pick<RunOutcome, 'output' | 'outputText'>, masked: unknown): unknown {
  if (masked === undefined) return undefined;
  return masked === outcome.output && outcome.outputText !== undefined ? masked : recordable(masked);
}

/** recordable with the text its size check made. */
export function recordedJson(output: unknown): Recorded {
  let json: string | undefined;
  try {
    json = JSON.stringify(output);
  } catch (error) {
    return { value: { notRecorded: true, reason: `output is not JSON-serialisable: ${(error as Error).message}` } };
  }
  if (json === undefined) return { value: null };
  if (json.length > MAX_RECORDED_OUTPUT_CHARS)
    return {
      value: { notRecorded: true, reason: `output of ${json.length} characters exceeds the record limit of ${MAX_RECORDED_OUTPUT_CHARS}` },
    };
  return { value: output, json: { of: output, text: json } };
}

/** Largest arguments or result of one sub-step in a record; a larger one is replaced by a note. */
const MAX_RECORDED_SUBSTEP_CHARS = 64 * 1024;

/** A sub-step as the record keeps it: secrets masked (credentials used so far included), arguments and result capped. */
export function recordedSubStep(run: Execution, step: NodeSubStep): SubStep {
  const masked = run.request.redactor.value(step) as NodeSubStep;
  const capped = (value: unknown): unknown => {
    const json = JSON.stringify(value);
    if (json === undefined) return undefined;
    return json.length > MAX_RECORDED_SUBSTEP_CHARS
      ? { notRecorded: true, reason: `${json.length} characters exceed the sub-step limit of ${MAX_RECORDED_SUBSTEP_CHARS}` }
      : value;
  };
  return {
    kind: masked.kind,
    name: masked.name,
    startedAt: masked.startedAt,
    durationMs: masked.durationMs,
    ...(masked.tokens ? { tokens: masked.tokens } : {}),
    ...(masked.arguments !== undefined ? { arguments: capped(masked.arguments) } : {}),
    ...(masked.result !== undefined ? { result: capped(masked.result) } : {}),
    ...(masked.error !== undefined ? { error: masked.error } : {}),
  };
}
