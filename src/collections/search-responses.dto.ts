import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { RerankOutcome, SearchResponse, SearchResultItem } from './search.service';

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

  @ApiPropertyOptional({ description: "The reranker's relevance score, for a passage it reranked: larger is more relevant" })
  rerankScore?: number;
}

export class RerankOutcomeDto implements RerankOutcome {
  @ApiProperty({ description: "false: the reranker failed, and the passages come in the search's own order" })
  applied: boolean;

  @ApiProperty({ type: 'integer', description: 'Passages given to the reranker, from the top of the ranking' })
  candidates: number;

  @ApiPropertyOptional({ description: 'Why the reranking was not applied' })
  error?: string;
}

export class SearchResponseDto implements SearchResponse {
  @ApiProperty({ type: [SearchHitDto], description: 'Matching passages, closest first (most relevant first when reranked)' })
  result: SearchHitDto[];

  @ApiPropertyOptional({ type: RerankOutcomeDto, description: 'Present when the search was to be reranked: whether it was' })
  rerank?: RerankOutcomeDto;
}
