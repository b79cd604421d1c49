import { IsBoolean } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

export class FilterParameters {
  @Parameter({
    displayName: 'Condition',
    description: 'Keep the item when true. As an expression, e.g. `item.status === "indexed"`.',
    schema: { examples: ['item.status === "indexed"'] },
  })
  @IsBoolean()
  condition: boolean;
}
