import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AppError } from '../common/app-error';
import { PageQueryDto } from '../common/pagination';
import { ApiKeyService } from './api-key.service';
import { ApiKeyListDto, CreatedUserDto, IssuedApiKeyDto, MeDto, UserPageDto } from './auth-responses.dto';
import { apiKeyView, CreateApiKeyDto, CreateUserDto, issuedKeyView, userView } from './auth.dto';
import { CurrentPrincipal, Principal } from './principal';
import { UsersService } from './users.service';

@ApiTags('auth')
@ApiSecurity('api-key')
@Controller('api/v1')
export class AuthController {
  constructor(
    private readonly users: UsersService,
    private readonly apiKeys: ApiKeyService,
  ) {}

  @Get('me')
  @ApiOkResponse({ type: MeDto, description: 'The user of the API key, and the key' })
  async me(@CurrentPrincipal() principal: Principal) {
    return { ...userView(await this.users.get(principal.userId)), keyId: principal.keyId };
  }

  @Post('api-keys')
  @ApiCreatedResponse({ type: IssuedApiKeyDto, description: 'The new key, with its secret shown this once' })
  async createKey(@CurrentPrincipal() principal: Principal, @Body() body: CreateApiKeyDto) {
    return issuedKeyView(await this.apiKeys.issue(principal.userId, body.name ?? 'default'));
  }

  @Get('api-keys')
  @ApiOkResponse({ type: ApiKeyListDto, description: 'Your keys, without their secrets' })
  async listKeys(@CurrentPrincipal() principal: Principal) {
    return { items: (await this.apiKeys.list(principal.userId)).map(apiKeyView) };
  }

  @Delete('api-keys/:id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Revoked: the key is refused from now on' })
  async revokeKey(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.apiKeys.revoke(principal.userId, id);
  }

  @Post('users')
  @ApiCreatedResponse({ type: CreatedUserDto, description: 'The new user and its first API key, shown this once' })
  @ApiResponse({ status: 403, description: 'Only admins create users' })
  async createUser(@CurrentPrincipal() principal: Principal, @Body() body: CreateUserDto) {
    if (!principal.isAdmin) throw AppError.forbidden('Only admins can create users');
    const { user, issued } = await this.users.create(body);
    return { ...userView(user), apiKey: issuedKeyView(issued) };
  }

  @Get('users')
  @ApiOkResponse({ type: UserPageDto })
  @ApiResponse({ status: 403, description: 'Only admins list users' })
  async listUsers(@CurrentPrincipal() principal: Principal, @Query() page: PageQueryDto) {
    if (!principal.isAdmin) throw AppError.forbidden('Only admins can list users');
    const result = await this.users.list(page);
    return { items: result.items.map(userView), total: result.total, offset: page.offset, limit: page.limit };
  }
}
