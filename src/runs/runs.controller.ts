import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiHeader, ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { RunAcceptedDto, RunDto, RunPageDto, RunRecordDto } from './run-responses.dto';
import { RunsService } from './runs.service';
import { NodeTestDto, parseNodeTest, parseStartRun, RetryRunDto, RunsQueryDto, StartRunDto, StartRunQueryDto } from './runs.dto';

/** Admission control's refusals (docs/operations.md, Backpressure): no run is started, Retry-After says when to try again. */
const QUEUE_LIMIT_429 =
  "The workflow's queued-run limit is reached (details.reason workflow-queue-limit): no run was started; Retry-After says when to try again";
const QUEUE_FULL_503 =
  'The service is at its queued-run limit (global-queue-limit) or its queue did not take the run in time (queue-unavailable): no run was started; Retry-After says when to try again';

@ApiTags('runs')
@ApiSecurity('api-key')
@Controller('api/v1')
export class RunsController {
  constructor(private readonly runs: RunsService) {}

  /**
   * The workflow's webhook: queues a run and answers at once, or with `?wait=` once the run
   * finished (at most 30 s; still 202, with the run's status then, when time runs out). Other methods on this path get 405.
   */
  @Post('workflows/:id/runs')
  @HttpCode(202)
  @ApiBody({ type: StartRunDto, required: false })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Repeated within 24 hours, returns the first run' })
  @ApiHeader({
    name: 'x-run-source',
    required: false,
    description: '`console` when the web console starts the run (shown as its trigger); anything else is a webhook call',
  })
  @ApiAcceptedResponse({ type: RunAcceptedDto, description: 'Queued; Location names the run' })
  @ApiOkResponse({ type: RunRecordDto, description: 'With ?wait=: the run record, once it finished in time' })
  @ApiResponse({ status: 403, description: 'Starting runs needs the editor or owner role' })
  @ApiResponse({ status: 409, description: 'runType production, and nothing is published' })
  @ApiResponse({
    status: 429,
    description:
      "The workflow's rate limit (settings.rateLimit) or queued-run limit (details.reason workflow-queue-limit) is reached; no run was started; Retry-After says when to try again",
  })
  @ApiResponse({ status: 503, description: QUEUE_FULL_503 })
  async start(
    @CurrentPrincipal() principal: Principal,
    @Param('id') workflowId: string,
    // `unknown` keeps the global validation pipe away: parseStartRun hands `input` on untouched.
    @Body() body: unknown,
    @Query() query: StartRunQueryDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Headers('x-run-source') source: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const trigger = source === 'console' ? 'console' : 'webhook';
    const accepted = await this.runs.start(principal, workflowId, parseStartRun(body), {
      idempotencyKey,
      waitSeconds: query.wait,
      trigger,
    });
    void reply.header('location', `/api/v1/runs/${accepted.body.runId}`);
    if (!accepted.created) void reply.header('idempotent-replayed', 'true');
    if (accepted.finished) {
      void reply.status(200);
      return accepted.finished;
    }
    return accepted.body;
  }

  /**
   * Tests one node of the draft on an input of your choice (given, pinned on the node, or taken from
   * an earlier run), and with `andAfter` what follows it: a test run whose record holds only those nodes.
   */
  @Post('workflows/:id/node-tests')
  @HttpCode(202)
  @ApiBody({ type: NodeTestDto })
  @ApiAcceptedResponse({ type: RunAcceptedDto, description: 'Queued; Location names the run' })
  @ApiOkResponse({ type: RunRecordDto, description: 'With ?wait=: the run record, once it finished in time' })
  @ApiResponse({ status: 403, description: 'Testing needs the editor or owner role' })
  @ApiResponse({ status: 429, description: QUEUE_LIMIT_429 })
  @ApiResponse({ status: 503, description: QUEUE_FULL_503 })
  async testNode(
    @CurrentPrincipal() principal: Principal,
    @Param('id') workflowId: string,
    @Body() body: unknown,
    @Query() query: StartRunQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const accepted = await this.runs.testNode(principal, workflowId, parseNodeTest(body), query.wait);
    void reply.header('location', `/api/v1/runs/${accepted.body.runId}`);
    if (accepted.finished) {
      void reply.status(200);
      return accepted.finished;
    }
    return accepted.body;
  }

  /** A new run of the same version and input; `from: "failed"` reuses what the nodes before the failure produced. */
  @Post('runs/:id/retry')
  @HttpCode(202)
  @ApiAcceptedResponse({ type: RunAcceptedDto, description: 'The new run, queued; Location names it' })
  @ApiResponse({ status: 403, description: 'Retrying needs the editor or owner role' })
  @ApiResponse({ status: 409, description: 'The run has not finished, or succeeded and from is "failed"' })
  @ApiResponse({ status: 429, description: QUEUE_LIMIT_429 })
  @ApiResponse({ status: 503, description: QUEUE_FULL_503 })
  async retry(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: RetryRunDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const accepted = await this.runs.retry(principal, id, body.from);
    void reply.header('location', `/api/v1/runs/${accepted.body.runId}`);
    return accepted.body;
  }

  @Get('runs')
  @ApiOkResponse({ type: RunPageDto, description: 'Newest first, without steps' })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: RunsQueryDto) {
    const { offset, limit, workflowId, status } = query;
    const result = await this.runs.list(principal, { workflowId, status }, { offset, limit });
    return { ...result, offset, limit };
  }

  @Get('runs/:id')
  @ApiOkResponse({ type: RunDto, description: 'The run record with its steps and the sub-workflow runs it started' })
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.runs.get(principal, id);
  }

  @Post('runs/:id/cancel')
  @HttpCode(200)
  @ApiOkResponse({ type: RunRecordDto, description: 'The run, canceled or about to stop at its next step' })
  @ApiResponse({ status: 403, description: 'Canceling needs the editor or owner role' })
  @ApiResponse({ status: 409, description: 'The run already finished' })
  cancel(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.runs.cancel(principal, id);
  }
}
