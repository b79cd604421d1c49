import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export interface PageRequest {
  offset: number;
  limit: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** `?offset=&limit=` for list endpoints: offset >= 0, 1 <= limit <= 100, default 20. */
export class PageQueryDto implements PageRequest {
  @ApiPropertyOptional({ minimum: 0, default: 0, description: 'Number of items to skip' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset = 0;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20, description: 'Number of items to return' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit = 20;
}
