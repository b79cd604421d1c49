import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { SearchResponseDto } from './search-responses.dto';
import { DEFAULT_TOP_K, SearchDto } from './search.dto';
import { rerankInput, SearchService } from './search.service';

@ApiTags('search')
@ApiSecurity('api-key')
@Controller('api/v1/collections')
export class SearchController {
  constructor(private readonly searches: SearchService) {}

  /** A query, not a creation: 200. */
  @Post(':id/search')
  @HttpCode(200)
  @ApiOkResponse({ type: SearchResponseDto, description: 'The passages nearest to the text, from offset, at most top_k' })
  @ApiResponse({ status: 409, description: 'The collection was indexed with another embedding model' })
  @ApiResponse({ status: 400, description: 'A field is invalid (named in details.fields), or rerank asks for what cannot be followed' })
  search(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: SearchDto) {
    return this.searches.search(principal, id, {
      text: body.text,
      topK: body.top_k ?? DEFAULT_TOP_K,
      offset: body.offset ?? 0,
      mode: body.mode,
      ...(body.rerank ? { rerank: rerankInput(body.rerank) } : {}),
    });
  }
}
