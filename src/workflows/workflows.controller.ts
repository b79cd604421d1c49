import { Body, Controller, Delete, Get, HttpCode, Param, ParseIntPipe, Post, Put, Query } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { PageQueryDto } from '../common/pagination';
import { CreateWorkflowDto, UpdateWorkflowDto } from './workflows.dto';
import { WorkflowsService } from './workflows.service';

@ApiTags('workflows')
@ApiSecurity('api-key')
@Controller('api/v1/workflows')
export class WorkflowsController {
  constructor(private readonly workflows: WorkflowsService) {}

  @Post()
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWorkflowDto) {
    return this.workflows.create(principal, body.name, body.definition, body.settings);
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
    return this.workflows.update(principal, id, body.name, body.definition, body.settings);
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
}
