import { Allow, IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

export class ExecuteWorkflowParameters {
  @Parameter({
    displayName: 'Workflow',
    description: 'Id of the workflow to run (`wfl_...`). The user who started this run needs the editor role on it.',
    schema: { examples: ['wfl_0123456789abcdef'] },
  })
  @IsString()
  @Matches(/^\S{1,100}$/, { message: 'workflowId must be a workflow id such as wfl_...' })
  workflowId: string;

  @Parameter({ displayName: 'Run type', description: '`production` runs its active published version; `test` its draft.' })
  @IsIn(['production', 'test'])
  runType: 'production' | 'test' = 'production';

  @Parameter({
    displayName: 'Input',
    description:
      "The sub-workflow's input (its trigger's output). Leave it out to pass this node's input; as an expression, any JSON value, e.g. `{ id: item.id }`.",
  })
  @IsOptional()
  @Allow()
  input?: unknown;
}
