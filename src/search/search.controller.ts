import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { SearchDto } from './search.dto';
import { SearchService } from './search.service';

@ApiTags('search')
@ApiSecurity('api-key')
@Controller('api/v1/collections')
export class SearchController {
  constructor(private readonly searches: SearchService) {}

  /** A query, not a creation: 200. */
  @Post(':id/search')
  @HttpCode(200)
  search(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: SearchDto) {
    return this.searches.search(principal, id, {
      text: body.text,
      topK: body.top_k ?? 10,
      offset: body.offset ?? 0,
      mode: body.mode,
    });
  }
}
