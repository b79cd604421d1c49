import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { RunsService } from './runs.service';
import { RunsQueryDto, StartRunDto } from './workflows.dto';

@ApiTags('runs')
@ApiSecurity('api-key')
@Controller('api/v1')
export class RunsController {
  constructor(private readonly runs: RunsService) {}

  /** The workflow's webhook: queues a run and answers at once. Other methods on this path get 405. */
  @Post('workflows/:id/runs')
  @HttpCode(202)
  @ApiBody({ type: StartRunDto, required: false })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Repeated within 24 hours, returns the first run' })
  @ApiResponse({ status: 202, description: '{runId, workflowId, runType, status: "queued"}; Location names the run' })
  @ApiResponse({ status: 409, description: 'runType production, and nothing is published' })
  async start(
    @CurrentPrincipal() principal: Principal,
    @Param('id') workflowId: string,
    // `unknown` keeps the global validation pipe away: `input` must arrive untouched.
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const accepted = await this.runs.start(principal, workflowId, body, idempotencyKey);
    void reply.header('location', `/api/v1/runs/${accepted.body.runId}`);
    if (!accepted.created) void reply.header('idempotent-replayed', 'true');
    return accepted.body;
  }

  @Get('runs')
  async list(@CurrentPrincipal() principal: Principal, @Query() query: RunsQueryDto) {
    const { offset, limit, workflowId, status } = query;
    const result = await this.runs.list(principal, { workflowId, status }, { offset, limit });
    return { ...result, offset, limit };
  }

  @Get('runs/:id')
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.runs.get(principal, id);
  }

  @Post('runs/:id/cancel')
  @HttpCode(200)
  cancel(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.runs.cancel(principal, id);
  }
}
