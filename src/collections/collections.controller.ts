import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { PageQueryDto } from '../common/pagination';
import { CollectionDto, CollectionPageDto, CollectionStatsDto } from './collection-responses.dto';
import { CreateCollectionDto } from './collections.dto';
import { CollectionsService } from './collections.service';

@ApiTags('collections')
@ApiSecurity('api-key')
@Controller('api/v1/collections')
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  @Post()
  @ApiCreatedResponse({ type: CollectionDto, description: 'The new collection; you are its owner' })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateCollectionDto) {
    return this.collections.create(principal, body.name);
  }

  @Get()
  @ApiOkResponse({ type: CollectionPageDto, description: 'The collections you hold a role on, newest first' })
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQueryDto) {
    const result = await this.collections.list(principal, page);
    return { ...result, offset: page.offset, limit: page.limit };
  }

  @Get(':id')
  @ApiOkResponse({ type: CollectionDto })
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.collections.get(principal, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted, with its files, passages and vectors' })
  @ApiResponse({ status: 403, description: 'Only the owner deletes a collection' })
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.collections.delete(principal, id);
  }

  @Get(':id/stats')
  @ApiOkResponse({ type: CollectionStatsDto })
  stats(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.collections.stats(principal, id);
  }
}
