import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { AppError } from '../common/app-error';
import { SearchResponseDto } from './search-responses.dto';
import { DEFAULT_TOP_K, MultiSearchDto, SearchOptionsDto } from './search.dto';
import { rerankInput, SearchInput, SearchService } from './search.service';

@ApiTags('search')
@ApiSecurity('api-key')
@Controller('api/v1')
export class SearchController {
  constructor(private readonly searches: SearchService) {}

  /** A query, not a creation: 200. */
  @Post('collections/:id/search')
  @HttpCode(200)
  @ApiOkResponse({ type: SearchResponseDto, description: 'The passages nearest to the text, from offset, at most top_k' })
  @ApiResponse({
    status: 400,
    description: 'A field is wrong (the filter names the place and the reason), or rerank asks for what cannot be followed',
  })
  @ApiResponse({ status: 409, description: 'The collection was indexed with another embedding model' })
  search(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: SearchOptionsDto) {
    return this.searches.search(principal, id, searchInput(body));
  }

  /**
   * One search across the collections named in collection_ids, or every collection the caller can
   * read (all: true); each collection is ranked on its own and the rankings fused by reciprocal rank.
   */
  @Post('search')
  @HttpCode(200)
  @ApiOkResponse({ type: SearchResponseDto, description: 'The best passages across the collections, each naming its collection' })
  @ApiResponse({ status: 400, description: 'Neither or both of collection_ids and all, or another field is wrong' })
  @ApiResponse({
    status: 404,
    description: 'A named collection does not exist or you hold no role on it: it is named, and nothing was searched',
  })
  @ApiResponse({ status: 409, description: 'A collection was indexed with another embedding model' })
  searchMany(@CurrentPrincipal() principal: Principal, @Body() body: MultiSearchDto) {
    if ((body.collection_ids === undefined) === (body.all !== true)) {
      throw AppError.validation([{ field: 'collection_ids', reason: 'give either collection_ids or all: true' }]);
    }
    const target = body.all ? { all: true as const } : { collectionIds: body.collection_ids! };
    return this.searches.searchMany(principal, target, searchInput(body));
  }
}

function searchInput(body: SearchOptionsDto): SearchInput {
  return {
    text: body.text,
    topK: body.top_k ?? DEFAULT_TOP_K,
    offset: body.offset ?? 0,
    mode: body.mode,
    filter: body.filter,
    perFile: body.per_file,
    mmrLambda: body.mmr_lambda,
    minScore: body.min_score,
    ...(body.rerank ? { rerank: rerankInput(body.rerank) } : {}),
  };
}
