import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiQuery, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { AppError } from '../common/app-error';
import { ToolRunDto, WorkflowToolCallDto, WorkflowToolListDto } from './workflow-responses.dto';
import { WorkflowToolsService } from './workflow-tools.service';

/** The longest `?wait=` a follower may hold a tool run's request open for, in seconds. */
const MAX_FOLLOW_SECONDS = 30;

const argumentsOf = (body: unknown): Record<string, unknown> => {
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    throw AppError.validation([{ field: 'body', reason: 'must be a JSON object of the tool arguments' }]);
  }
  return (body ?? {}) as Record<string, unknown>;
};

function followSeconds(wait: string | undefined): number {
  if (wait === undefined) return 0;
  const seconds = Number(wait);
  if (!/^\d+$/.test(wait) || seconds > MAX_FOLLOW_SECONDS)
    throw AppError.validation([{ field: 'wait', reason: `must be a whole number of seconds from 0 to ${MAX_FOLLOW_SECONDS}` }]);
  return seconds;
}

/**
 * The workflows offered as MCP tools, over REST: what the stdio MCP program lists, calls and
 * follows, so a local client sees the same tools, tasks and approvals as a remote one.
 */
@ApiTags('workflows')
@ApiSecurity('api-key')
@Controller('api/v1')
export class WorkflowToolsController {
  constructor(private readonly tools: WorkflowToolsService) {}

  /** The tools the caller may call (viewer role at least on their workflow). */
  @Get('workflow-tools')
  @ApiOkResponse({ type: WorkflowToolListDto })
  async list(@CurrentPrincipal() principal: Principal) {
    return { items: await this.tools.list(principal) };
  }

  /** Runs the tool's workflow with the arguments and answers once it finished, or with `status: "running"` after MCP_TOOL_TIMEOUT_MS. */
  @Post('workflow-tools/:name/calls')
  @HttpCode(200)
  @ApiBody({ schema: { type: 'object', additionalProperties: true, description: 'The tool arguments, checked against its input schema' } })
  @ApiOkResponse({ type: WorkflowToolCallDto, description: 'The run and its output once it finished, or status running' })
  call(@CurrentPrincipal() principal: Principal, @Param('name') name: string, @Body() body: unknown) {
    return this.tools.call(principal, name, argumentsOf(body));
  }

  /** Starts the tool's workflow with the arguments and answers at once: follow the run at /api/v1/tool-runs/:runId (an MCP task). */
  @Post('workflow-tools/:name/runs')
  @HttpCode(202)
  @ApiBody({ schema: { type: 'object', additionalProperties: true, description: 'The tool arguments, checked against its input schema' } })
  @ApiResponse({ status: 202, type: ToolRunDto, description: 'Started' })
  start(@CurrentPrincipal() principal: Principal, @Param('name') name: string, @Body() body: unknown) {
    return this.tools.start(principal, name, argumentsOf(body));
  }

  /**
   * A run the caller started through a workflow tool: where it stands, its output once it ended,
   * and the approval it waits at. With `?wait=N`, answers once it ends or waits, or after N seconds.
   */
  @Get('tool-runs/:runId')
  @ApiQuery({ name: 'wait', required: false, description: `Seconds (0-${MAX_FOLLOW_SECONDS}) to wait for the run to end or wait` })
  @ApiOkResponse({ type: ToolRunDto })
  follow(@CurrentPrincipal() principal: Principal, @Param('runId') runId: string, @Query('wait') wait?: string) {
    return this.tools.waitForRun(principal, runId, followSeconds(wait) * 1000);
  }

  /** Cancels a run the caller started through a workflow tool. */
  @Post('tool-runs/:runId/cancel')
  @HttpCode(200)
  @ApiOkResponse({ type: ToolRunDto })
  @ApiResponse({ status: 409, description: 'The run already ended' })
  cancel(@CurrentPrincipal() principal: Principal, @Param('runId') runId: string) {
    return this.tools.cancelRun(principal, runId);
  }
}
