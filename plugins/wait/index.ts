import { defineNode, DURATION_UNITS, MAX_PAUSE_MS, NodeConfigurationError, waitUntil } from 'workflow-collection-service/sdk';
import { WaitParameters } from './wait.parameters';

export { WaitParameters };

export default defineNode({
  type: 'wait',
  version: 1,
  displayName: 'Wait',
  description:
    "Pauses the run for a duration or until a moment, then passes its input on unchanged. The run is stored as waiting and holds no worker meanwhile; a restart loses nothing. Inside a loop's body the wait holds its worker instead.",
  parameters: WaitParameters,
  defaultRunMode: 'input',
  execute(ctx) {
    const { amount, unit, until } = ctx.params;
    const now = Date.now();
    const at = until !== undefined ? new Date(until).getTime() : now + amount * DURATION_UNITS[unit];
    if (at - now > MAX_PAUSE_MS)
      throw new NodeConfigurationError(`A run waits ${MAX_PAUSE_MS / DURATION_UNITS.days} days at the most`, {
        details: { until: new Date(at).toISOString() },
      });
    return waitUntil(new Date(Math.max(at, now)), ctx.runMode === 'input' ? ctx.input : ctx.item);
  },
});
