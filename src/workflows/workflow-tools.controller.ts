import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { AppError } from '../common/app-error';
import { WorkflowToolCallDto, WorkflowToolListDto } from './workflow-responses.dto';
import { WorkflowToolsService } from './workflow-tools.service';

/**
 * The workflows offered as MCP tools, over REST: what the stdio MCP program lists and calls, so
 * a local client sees the same tools as a remote one.
 */
@ApiTags('workflows')
@ApiSecurity('api-key')
@Controller('api/v1/workflow-tools')
export class WorkflowToolsController {
  constructor(private readonly tools: WorkflowToolsService) {}

  /** The tools the caller may call (viewer role at least on their workflow). */
  @Get()
  @ApiOkResponse({ type: WorkflowToolListDto })
  async list(@CurrentPrincipal() principal: Principal) {
    return { items: await this.tools.list(principal) };
  }

  /** Runs the tool's workflow with the arguments and answers once it finished, or with `status: "running"` after MCP_TOOL_TIMEOUT_MS. */
  @Post(':name/calls')
  @HttpCode(200)
  @ApiBody({ schema: { type: 'object', additionalProperties: true, description: 'The tool arguments, checked against its input schema' } })
  @ApiOkResponse({ type: WorkflowToolCallDto, description: 'The run and its output once it finished, or status running' })
  call(@CurrentPrincipal() principal: Principal, @Param('name') name: string, @Body() body: unknown) {
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw AppError.validation([{ field: 'body', reason: 'must be a JSON object of the tool arguments' }]);
    }
    return this.tools.call(principal, name, (body ?? {}) as Record<string, unknown>);
  }
}
