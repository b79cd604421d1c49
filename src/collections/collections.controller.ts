import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { PageQueryDto } from '../common/pagination';
import { CreateCollectionDto } from './collections.dto';
import { CollectionsService } from './collections.service';

@ApiTags('collections')
@ApiSecurity('api-key')
@Controller('api/v1/collections')
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateCollectionDto) {
    return this.collections.create(principal, body.name);
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQueryDto) {
    const result = await this.collections.list(principal, page);
    return { ...result, offset: page.offset, limit: page.limit };
  }

  @Get(':id')
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.collections.get(principal, id);
  }

  @Delete(':id')
  @HttpCode(204)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.collections.delete(principal, id);
  }

  @Get(':id/stats')
  stats(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.collections.stats(principal, id);
  }
}
