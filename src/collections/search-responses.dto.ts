import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { SearchResultItem } from './search.service';

/** What the search endpoint answers (INTERFACE.md 4.4), for OpenAPI. */

export class SearchHitDto implements SearchResultItem {
  @ApiProperty({ description: 'Id of the matching passage' })
  id: string;

  @ApiProperty({ description: 'Text of the passage' })
  content: string;

  @ApiProperty({ description: 'Cosine distance between the query and the passage: smaller is closer' })
  distance: number;

  @ApiProperty({ description: 'The collection the passage is from' })
  collectionId: string;

  @ApiProperty({ description: 'The file the passage is from' })
  fileId: string;

  @ApiProperty()
  fileName: string;

  @ApiProperty({ type: 'integer', description: 'Position of the passage within its file, from 0' })
  chunkIndex: number;

  @ApiPropertyOptional({ type: 'integer', description: 'Page of the file the passage starts on, when the format has pages' })
  page?: number;
}

export class SearchResponseDto {
  @ApiProperty({ type: [SearchHitDto], description: 'Matching passages, closest first' })
  result: SearchHitDto[];
}
