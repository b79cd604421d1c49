import { IsString, MaxLength, MinLength } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

export const MAX_CODE_CHARS = 100_000;

export class CodeParameters {
  @Parameter({
    displayName: 'Code',
    description:
      'JavaScript run in the sandbox (no require, process, timers or network; the memory and time limits of expressions): a function body whose `return` gives the output, as JSON. It sees `input` (run mode input) or `item` and `itemIndex` (run mode item), `variables` and `nodes`.',
    code: true,
    schema: { examples: ['return input.filter((row) => row.total > 100).map((row) => ({ id: row.id, total: row.total }));'] },
  })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_CODE_CHARS)
  code: string;
}
