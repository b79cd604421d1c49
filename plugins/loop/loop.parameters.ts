import { IsBoolean, IsIn, IsInt, Max, Min } from 'class-validator';
import { Parameter } from 'workflow-collection-service/sdk';

export const LOOP_MODES = ['items', 'repeat'] as const;
export const MAX_BATCH_SIZE = 10_000;
export const MAX_ITERATIONS = 10_000;

export class LoopParameters {
  @Parameter({
    displayName: 'Mode',
    description:
      '`items`: split the input array into batches and run the body once per batch (Split in Batches). `repeat`: run the body again and again, e.g. to read page after page, until it gives back nothing, `continueWhile` turns false or `maxIterations` is reached.',
  })
  @IsIn(LOOP_MODES)
  mode: (typeof LOOP_MODES)[number] = 'items';

  @Parameter({ displayName: 'Batch size', description: 'Items per iteration in `items` mode.' })
  @IsInt()
  @Min(1)
  @Max(MAX_BATCH_SIZE)
  batchSize: number = 1;

  @Parameter({
    displayName: 'Max iterations',
    description: 'In `repeat` mode, the loop ends after this many iterations whatever the body gives back.',
  })
  @IsInt()
  @Min(1)
  @Max(MAX_ITERATIONS)
  maxIterations: number = 100;

  @Parameter({
    displayName: 'Stop when empty',
    description: 'In `repeat` mode, end the loop once an iteration gives back nothing or an empty array (the last page of a listing).',
  })
  @IsBoolean()
  stopWhenEmpty: boolean = true;

  @Parameter({
    displayName: 'Continue while',
    description:
      'In `repeat` mode, evaluated before each iteration: false ends the loop. As an expression it sees `loop.iteration` and `loop.results` (what each iteration gave back), e.g. `loop.iteration < 5`.',
  })
  @IsBoolean()
  continueWhile: boolean = true;
}
