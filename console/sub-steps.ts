import type { Step, SubStep } from './api-types';

/** The step's sub-steps, those that have the shape the console reads (the field is newer than some servers). */
export function subStepsOf(step: Pick<Step, 'nodeId'>): SubStep[] {
  const raw = (step as { subSteps?: unknown }).subSteps;
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (s): s is SubStep =>
      typeof s === 'object' &&
      s !== null &&
      (s.kind === 'model' || s.kind === 'tool') &&
      typeof s.name === 'string' &&
      typeof s.durationMs === 'number',
  );
}
