import { Body, Controller, Delete, Get, HttpCode, Param, Put, Type } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ResourceType } from '../domain/membership.model';
import { MemberDto, MemberListDto } from './auth-responses.dto';
import { memberView, SetMemberRoleDto } from './auth.dto';
import { MembersService } from './members.service';
import { CurrentPrincipal, Principal } from './principal';

/**
 * `GET <basePath>/:id/members`, `PUT` and `DELETE <basePath>/:id/members/:userId` for one type of
 * shared resource: a controller class per type, registered by the resource's module beside its
 * own controller, and listed in the API docs under the same tag (the last segment of `basePath`).
 */
export function membersController(type: ResourceType, basePath: string): Type<unknown> {
  @ApiTags(basePath.split('/').pop()!)
  @ApiSecurity('api-key')
  @Controller(basePath)
  class MembersController {
    constructor(private readonly members: MembersService) {}

    @Get(':id/members')
    @ApiOkResponse({ type: MemberListDto })
    async listMembers(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
      return { items: (await this.members.list(principal, type, id)).map(memberView) };
    }

    @Put(':id/members/:userId')
    @ApiOkResponse({ type: MemberDto, description: 'The role the user now holds' })
    @ApiResponse({ status: 403, description: 'Only owners share' })
    @ApiResponse({ status: 409, description: 'The last owner cannot step down' })
    async setMember(
      @CurrentPrincipal() principal: Principal,
      @Param('id') id: string,
      @Param('userId') userId: string,
      @Body() body: SetMemberRoleDto,
    ) {
      return memberView(await this.members.set(principal, type, id, userId, body.role));
    }

    @Delete(':id/members/:userId')
    @HttpCode(204)
    @ApiNoContentResponse({ description: 'The user no longer holds a role on it' })
    @ApiResponse({ status: 403, description: 'Only owners unshare' })
    @ApiResponse({ status: 409, description: 'The last owner cannot be removed' })
    async removeMember(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('userId') userId: string) {
      await this.members.remove(principal, type, id, userId);
    }
  }
  // Names the class after its resource, for Nest's route log and distinct OpenAPI operation ids.
  Object.defineProperty(MembersController, 'name', { value: `${type[0].toUpperCase()}${type.slice(1)}MembersController` });
  return MembersController;
}
