import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { VersionNumberPipe } from '../common/validation';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { PageQueryDto } from '../common/pagination';
import { WorkflowDto, WorkflowPageDto, WorkflowVersionDto, WorkflowVersionListDto } from './workflow-responses.dto';
import { CreateWorkflowDto, UpdateWorkflowDto } from './workflows.dto';
import { WorkflowsService } from './workflows.service';

@ApiTags('workflows')
@ApiSecurity('api-key')
@Controller('api/v1/workflows')
export class WorkflowsController {
  constructor(private readonly workflows: WorkflowsService) {}

  @Post()
  @ApiCreatedResponse({ type: WorkflowDto, description: 'The new workflow; you are its owner' })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWorkflowDto) {
    return this.workflows.create(principal, body.name, body.definition, body.settings);
  }

  @Get()
  @ApiOkResponse({ type: WorkflowPageDto })
  async list(@CurrentPrincipal() principal: Principal, @Query() page: PageQueryDto) {
    const result = await this.workflows.list(principal, page);
    return { ...result, offset: page.offset, limit: page.limit };
  }

  @Get(':id')
  @ApiOkResponse({ type: WorkflowDto })
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.workflows.get(principal, id);
  }

  @Put(':id')
  @ApiOkResponse({ type: WorkflowDto, description: 'The workflow with its new draft' })
  @ApiResponse({ status: 403, description: 'Editing needs the editor or owner role' })
  update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateWorkflowDto) {
    return this.workflows.update(principal, id, body.name, body.definition, body.settings);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted, with its versions and runs' })
  @ApiResponse({ status: 403, description: 'Only the owner deletes a workflow' })
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    await this.workflows.delete(principal, id);
  }

  @Post(':id/publish')
  @ApiCreatedResponse({ type: WorkflowVersionDto, description: 'The new version, now active: production runs execute it' })
  @ApiResponse({ status: 403, description: 'Publishing needs the editor or owner role' })
  publish(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.workflows.publish(principal, id);
  }

  @Get(':id/versions')
  @ApiOkResponse({ type: WorkflowVersionListDto, description: 'The published versions' })
  listVersions(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.workflows.listVersions(principal, id);
  }

  @Get(':id/versions/:version')
  @ApiOkResponse({ type: WorkflowVersionDto })
  getVersion(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('version', VersionNumberPipe) version: number) {
    return this.workflows.getVersion(principal, id, version);
  }

  /** Rollback: production runs execute this version from now on. */
  @Post(':id/versions/:version/activate')
  @HttpCode(200)
  @ApiOkResponse({ type: WorkflowDto, description: 'The workflow, with this version active' })
  @ApiResponse({ status: 403, description: 'Activating needs the editor or owner role' })
  activate(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('version', VersionNumberPipe) version: number) {
    return this.workflows.activate(principal, id, version);
  }
}
