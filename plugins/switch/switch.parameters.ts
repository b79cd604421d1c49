import { Allow, ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, Matches } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

export const MAX_CASES = 20;

export class SwitchParameters {
  @Parameter({
    displayName: 'Cases',
    description: `Names of the outputs, one per case (1 to ${MAX_CASES}, letters, digits, _ or -); a \`fallback\` output follows them. Fixed: edges name these outputs.`,
    schema: { examples: [['new', 'open', 'closed']] },
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_CASES)
  @ArrayUnique()
  @Matches(/^(?!fallback$)[A-Za-z0-9_-]{1,64}$/, {
    each: true,
    message: 'each case must be 1-64 letters, digits, _ or - (and not "fallback")',
  })
  cases: string[];

  @Parameter({
    displayName: 'Value',
    description:
      'Picks the case of each item: the name of a case, or its index (0 for the first). Anything else goes to `fallback`. As an expression, e.g. `item.status`, or rules such as `item.total > 1000 ? "big" : item.total > 100 ? "medium" : null`.',
    schema: { examples: ['item.status'] },
  })
  @Allow()
  value: unknown;
}
