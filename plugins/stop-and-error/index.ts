import { defineNode, NodeStopError } from 'workflow-collection-service/sdk';
import { StopAndErrorParameters } from './stop-and-error.parameters';

export { StopAndErrorParameters };

export default defineNode({
  type: 'stop-and-error',
  version: 1,
  displayName: 'Stop and Error',
  description:
    'Fails on purpose with a message (error code WORKFLOW_STOPPED, never retried): the run fails, and the nodes after this one do not run. Put it behind an IF to stop a run that meets bad data.',
  parameters: StopAndErrorParameters,
  defaultRunMode: 'input',
  execute(ctx): never {
    throw new NodeStopError(ctx.params.message, ctx.params.details ? { details: ctx.params.details } : {});
  },
});
