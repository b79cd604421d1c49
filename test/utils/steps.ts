import type { StepRecord } from '../../src/domain/step.model';

/** The record of a node that succeeded just now, as the executor hands it to the store. */
export const succeededStep = (nodeId: string, position: number, output: unknown = { ok: nodeId }): StepRecord => ({
  nodeId,
  position,
  type: 'echo',
  version: 1,
  status: 'succeeded',
  attempts: 1,
  startedAt: new Date(),
  finishedAt: new Date(),
  output,
  error: null,
});
