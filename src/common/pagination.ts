import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { Field, wholeNumberFromString } from './input-validation';

export interface PageRequest {
  offset: number;
  limit: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export const MAX_PAGE_SIZE = 100;

/** `?offset=&limit=` for list endpoints: offset >= 0, 1 <= limit <= 100, default 20. */
export class PageQueryDto implements PageRequest {
  @Field({ description: 'Number of items to skip' })
  @IsOptional()
  @Transform(wholeNumberFromString)
  @IsInt()
  @Min(0)
  offset = 0;

  @Field({ description: 'Number of items to return' })
  @IsOptional()
  @Transform(wholeNumberFromString)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit = 20;
}
