import { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';
import { anyJsonValue } from './input-validation';

/** Helpers for the response classes that describe the API's answers in OpenAPI (`*-responses.dto.ts`). */

/** Options of a property any JSON value may fill (a run's input, a node's output). */
export const anyJson = (description: string) => ({ ...anyJsonValue(), description }) as ApiPropertyOptions;

/** ISO 8601 timestamp, UTC. */
export const timestamp = (description = 'ISO 8601 timestamp, UTC', nullable = false) =>
  ({ type: 'string', format: 'date-time', description, ...(nullable ? { nullable: true } : {}) }) as const;

/** `{items, total, offset, limit}`: a page of a list endpoint, named after what it lists. */
export function pageOf<T>(item: Type<T>, name: string): Type<{ items: T[]; total: number; offset: number; limit: number }> {
  class Page {
    @ApiProperty({ type: [item] })
    items: T[];

    @ApiProperty({ type: 'integer', description: 'Number of items in all pages' })
    total: number;

    @ApiProperty({ type: 'integer', description: 'The offset of this page' })
    offset: number;

    @ApiProperty({ type: 'integer', description: 'The page size asked for' })
    limit: number;
  }
  Object.defineProperty(Page, 'name', { value: name });
  return Page;
}

/** `{items}`: a whole list, named after what it lists. */
export function listOf<T>(item: Type<T>, name: string): Type<{ items: T[] }> {
  class List {
    @ApiProperty({ type: [item] })
    items: T[];
  }
  Object.defineProperty(List, 'name', { value: name });
  return List;
}
