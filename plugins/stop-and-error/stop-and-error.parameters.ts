import { IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

export class StopAndErrorParameters {
  @Parameter({
    displayName: 'Message',
    description:
      'Why the workflow stops, as the error of this node and of the run; `${...}` insertions are rendered, e.g. `Order ${input.id} has no customer`.',
    template: true,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(2000)
  message: string;

  @Parameter({ displayName: 'Details', description: 'Facts kept with the error in the run record, as a JSON object.' })
  @IsOptional()
  @IsObject()
  details?: Record<string, unknown>;
}
