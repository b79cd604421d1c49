import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

export const MERGE_MODES = ['append', 'byKey', 'byPosition'] as const;
export const KEY_JOINS = ['inner', 'left', 'outer'] as const;
export const POSITION_JOINS = ['shortest', 'longest'] as const;

export class MergeParameters {
  @Parameter({
    displayName: 'Mode',
    description:
      '`append`: the items of every input one after the other, in edge order. `byKey`: items of the first input joined with items of the others that have the same `key`. `byPosition`: the n-th items of every input merged into one.',
  })
  @IsIn(MERGE_MODES)
  mode: (typeof MERGE_MODES)[number] = 'append';

  @Parameter({
    displayName: 'Key',
    description: 'In `byKey` mode, the field the items are matched on; a dotted path reaches into nested objects, e.g. `customer.id`.',
    schema: { examples: ['id', 'customer.id'] },
  })
  @IsOptional()
  @IsString()
  @Matches(/^[^.\s]+(\.[^.\s]+)*$/, { message: 'key must be a field name or a dotted path such as customer.id' })
  key?: string;

  @Parameter({
    displayName: 'Join',
    description:
      'In `byKey` mode: `inner` keeps the items found on both sides, `left` every item of the first input, `outer` every item of either. In `byPosition` mode: `shortest` stops at the shortest input, `longest` goes on to the longest.',
  })
  @IsOptional()
  @IsIn([...KEY_JOINS, ...POSITION_JOINS])
  join?: string;
}
