import { IsBoolean } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

export class IfParameters {
  @Parameter({
    displayName: 'Condition',
    description:
      'Where each item goes: true to the `true` output, false to `false`. As an expression, e.g. `item.amount > 100` (run mode item) or `input.length > 0` (run mode input).',
    schema: { examples: ['item.amount > 100'] },
  })
  @IsBoolean()
  condition: boolean;
}
