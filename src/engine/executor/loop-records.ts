import type { StepRecord } from '../../domain/step.model';
import type { StepListener } from './run-contract';
import { MAX_RECORDED_OUTPUT_CHARS } from './step-records';

/**
 * Values of a loop body node over the iterations, as its record keeps them: one entry per
 * iteration while the whole list fits the record limit, then the note `recordable` gives for an
 * output that does not. Its size is kept as it grows, so each iteration costs its own entry only.
 */
class RecordedList {
  private items: unknown[] | null = [];
  private count = 0;
  /** JSON characters of the whole list: brackets, entries and commas. */
  private chars = 2;

  add(value: unknown): void {
    this.count++;
    // Past the limit, the list is a note: the iterations after it are not serialised only to be counted.
    if (!this.items) return;
    this.chars += (JSON.stringify(value) ?? 'null').length + (this.count > 1 ? 1 : 0);
    if (this.chars > MAX_RECORDED_OUTPUT_CHARS) this.items = null;
    this.items?.push(value);
  }

  recorded(): unknown {
    return (
      this.items ?? {
        notRecorded: true,
        reason: `output of more than ${this.chars} characters exceeds the record limit of ${MAX_RECORDED_OUTPUT_CHARS}`,
      }
    );
  }
}

/** Gathers the records of a loop body's nodes over its iterations: one record per node, one input and output per iteration. */
export class LoopRecords {
  private readonly byNode = new Map<string, { step: StepRecord; inputs: RecordedList; outputs: RecordedList }>();

  listenerFor(parent: StepListener): StepListener {
    return {
      finished: (step) => this.add(step),
      // Without the iterations' inputs and outputs: written before every iteration of the node, it
      // must not grow with them. The record written when the loop ends has them.
      started: (step) => parent.started({ ...this.merged(step), status: 'running' }),
      // What finished before the loop is stored before it starts; the body's records wait for the loop's end.
      starting: () => parent.starting?.() ?? Promise.resolve(),
    };
  }

  add(step: StepRecord): void {
    const earlier = this.byNode.get(step.nodeId);
    const record = earlier ?? { step, inputs: new RecordedList(), outputs: new RecordedList() };
    record.step = this.merged(step);
    if (counts(step)) {
      record.inputs.add(step.input ?? null);
      record.outputs.add(step.output ?? null);
    }
    this.byNode.set(step.nodeId, record);
  }

  /** One record per node that the body reached. */
  records(): StepRecord[] {
    return [...this.byNode.values()].map(({ step, inputs, outputs }) => ({
      ...step,
      input: inputs.recorded(),
      output: outputs.recorded(),
    }));
  }

  /** The node's record so far, with this step: its worst status, its first start, its last finish. */
  private merged(step: StepRecord): StepRecord {
    const earlier = this.byNode.get(step.nodeId)?.step;
    const ran = step.status !== 'skipped';
    // Without the texts of this iteration's values (StepRecord.json): the loop's record holds lists of them.
    const { input: _input, output: _output, json: _json, ...fields } = step;
    return {
      ...fields,
      status: earlier?.status === 'failed' ? 'failed' : earlier && !ran ? earlier.status : step.status,
      attempts: Math.max(earlier?.attempts ?? 0, step.attempts),
      startedAt: earlier?.startedAt ?? step.startedAt,
      finishedAt: step.finishedAt ?? earlier?.finishedAt ?? null,
      error: step.error ?? earlier?.error ?? null,
      iterations: (earlier?.iterations ?? 0) + (counts(step) ? 1 : 0),
    };
  }
}

/** A step that ran to an end in an iteration: it adds an entry to its node's inputs and outputs. */
const counts = (step: StepRecord): boolean => step.status !== 'skipped' && step.status !== 'running';
