import { Body, Controller, Delete, Get, HttpCode, Param, ParseIntPipe, Post, Put, Query } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { memberView, SetMemberRoleDto } from '../auth/auth.dto';
import { MembersService } from '../auth/members.service';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { PageQueryDto } from '../common/pagination';
import { CreateWorkflowDto, UpdateWorkflowDto } from './workflows.dto';
import { WorkflowsService } from './workflows.service';

@ApiTags('workflows')
@ApiSecurity('api-key')
@Controller('api/v1/workflows')
export class WorkflowsController {
  constructor(
    private readonly workflows: WorkflowsService,
    private readonly members: MembersService,
  ) {}

  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWorkflowDto) {
    return this.workflows.create(principal, body.name, body.definition);
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQueryDto) {
    const result = await this.workflows.list(principal, page);
    return { ...result, offset: page.offset, limit: page.limit };
  }

  @Get(':id')
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.workflows.get(principal, id);
  }

  @Put(':id')
  update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateWorkflowDto) {
    return this.workflows.update(principal, id, body.name, body.definition);
  }

  @Delete(':id')
  @HttpCode(204)
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.workflows.delete(principal, id);
  }

  @Post(':id/publish')
  publish(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.workflows.publish(principal, id);
  }

  @Get(':id/versions')
  listVersions(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.workflows.listVersions(principal, id);
  }

  @Get(':id/versions/:version')
  getVersion(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('version', ParseIntPipe) version: number) {
    return this.workflows.getVersion(principal, id, version);
  }

  /** Rollback: production runs execute this version from now on. */
  @Post(':id/versions/:version/activate')
  @HttpCode(200)
  activate(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('version', ParseIntPipe) version: number) {
    return this.workflows.activate(principal, id, version);
  }

  @Get(':id/members')
  async listMembers(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { items: (await this.members.list(principal, 'workflow', id)).map(memberView) };
  }

  @Put(':id/members/:userId')
  async setMember(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Param('userId') userId: string,
    @Body() body: SetMemberRoleDto,
  ) {
    return memberView(await this.members.set(principal, 'workflow', id, userId, body.role));
  }

  @Delete(':id/members/:userId')
  @HttpCode(204)
  async removeMember(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('userId') userId: string) {
    await this.members.remove(principal, 'workflow', id, userId);
  }
}
