import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { PageQueryDto } from '../common/pagination';
import {
  CreateCredentialDto,
  CredentialDto,
  CredentialPageDto,
  CredentialUsageDto,
  CredentialUsePageDto,
  UpdateCredentialDto,
} from './credentials.dto';
import { CredentialsService } from './credentials.service';

@ApiTags('credentials')
@ApiSecurity('api-key')
@Controller('api/v1/credentials')
export class CredentialsController {
  constructor(private readonly credentials: CredentialsService) {}

  @Post()
  @ApiCreatedResponse({
    type: CredentialDto,
    description: 'The new credential, without its secrets (they are never returned); you are its owner',
  })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateCredentialDto) {
    return this.credentials.create(principal, body);
  }

  @Get()
  @ApiOkResponse({ type: CredentialPageDto, description: 'The credentials you hold a role on, newest first' })
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQueryDto) {
    const result = await this.credentials.list(principal, page);
    return { ...result, offset: page.offset, limit: page.limit };
  }

  @Get(':id')
  @ApiOkResponse({ type: CredentialDto })
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.credentials.get(principal, id);
  }

  @Patch(':id')
  @ApiOkResponse({ type: CredentialDto, description: 'Renamed, changed or rotated' })
  @ApiResponse({ status: 403, description: 'Changing a credential needs the editor role' })
  update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateCredentialDto) {
    return this.credentials.update(principal, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted; nodes that name it fail until given another' })
  @ApiResponse({ status: 403, description: 'Only an owner deletes a credential' })
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.credentials.delete(principal, id);
  }

  @Get(':id/usage')
  @ApiOkResponse({ type: CredentialUsageDto, description: 'The workflows that name it' })
  usage(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.credentials.usage(principal, id);
  }

  @Get(':id/uses')
  @ApiOkResponse({
    type: CredentialUsePageDto,
    description: 'Every use, newest first: who (the user a run or dropdown acted as), when, which host, what for, sent or refused',
  })
  @ApiResponse({ status: 403, description: 'Only an owner reads the uses of a credential' })
  async uses(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() page: PageQueryDto) {
    const result = await this.credentials.uses(principal, id, page);
    return { ...result, offset: page.offset, limit: page.limit };
  }
}
