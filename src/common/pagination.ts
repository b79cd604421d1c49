import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { Field, validateInput, wholeNumberFromString } from './input-validation';
import type { PageRequest } from './page';

export const MAX_PAGE_SIZE = 100;
const DEFAULT_PAGE_SIZE = 20;

/**
 * The largest offset taken: the largest whole number a JavaScript number holds exactly (a larger
 * one would be rounded, or overflow the store's integers, instead of being refused).
 */
export const MAX_PAGE_OFFSET = Number.MAX_SAFE_INTEGER;

/** A count from a query string, or its default when given null (an optional argument of a tool, as JSON clients send one they leave out). */
const countOr =
  (fallback: number) =>
  ({ value }: { value: unknown }): unknown =>
    value === null ? fallback : wholeNumberFromString({ value });

/** `?offset=&limit=` for list endpoints: 0 <= offset <= MAX_PAGE_OFFSET, 1 <= limit <= MAX_PAGE_SIZE, default 20. */
export class PageQueryDto implements PageRequest {
  @Field({ description: 'Number of items to skip' })
  @IsOptional()
  @Transform(countOr(0))
  @IsInt()
  @Min(0)
  @Max(MAX_PAGE_OFFSET)
  offset = 0;

  @Field({ description: 'Number of items to return' })
  @IsOptional()
  @Transform(countOr(DEFAULT_PAGE_SIZE))
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit = DEFAULT_PAGE_SIZE;
}

/**
 * The page a service was asked for, checked by the rules of PageQueryDto: services are also called
 * by workflow nodes, which pass no door, and a page refused there reads as it does over REST or MCP.
 * @throws AppError VALIDATION_FAILED naming offset and limit
 */
export function validPage(page: PageRequest): PageRequest {
  const { offset, limit } = validateInput(PageQueryDto, { offset: page.offset, limit: page.limit });
  return { offset, limit };
}
