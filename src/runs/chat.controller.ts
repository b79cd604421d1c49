import { Body, Controller, Headers, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiHeader, ApiOkResponse, ApiProduces, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { ROOT_LOGGER } from '../common/logger';
import { TERMINAL_RUN_STATUSES } from '../domain/run.model';
import { ChatAnswerDto, ChatMessageDto, ChatQueryDto } from './chat.dto';
import { ChatService } from './chat.service';

/** A comment line now and then keeps proxies from closing a quiet stream (a long model call). */
const KEEP_ALIVE_MS = 15_000;

/** Server-Sent Events unless the caller asks for JSON: `?stream=false`, or an Accept that takes JSON and not an event stream. */
function wantsStream(stream: 'true' | 'false' | undefined, accept: string | undefined): boolean {
  if (stream !== undefined) return stream === 'true';
  const types = (accept ?? '').toLowerCase();
  return !(types.includes('application/json') && !types.includes('text/event-stream'));
}

@ApiTags('runs')
@ApiSecurity('api-key')
@Controller('api/v1')
export class ChatController {
  private readonly logger: Logger;

  constructor(
    private readonly chat: ChatService,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'chat' });
  }

  /**
   * Sends a message to a published workflow whose trigger is chat-trigger: starts a run of the
   * active version with `{sessionId, message}` as input, acting as the caller. Answers as
   * Server-Sent Events: `run` ({runId, status}), `step` (each node as it finishes), `substep` and
   * `token` (a running node's model and tool calls and the tokens of its answer, when it runs in
   * this process), then `done` ({runId, status, answer, output, error}). With `?stream=false` or
   * `Accept: application/json`: the `done` data as JSON once the run finished (202 with where it
   * stands after 120 s). A client that leaves does not stop the run: read it with GET /api/v1/runs/{id}.
   */
  @Post('workflows/:id/chat')
  @ApiBody({ type: ChatMessageDto })
  @ApiProduces('text/event-stream', 'application/json')
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'Repeated within 24 hours, answers about the first run instead of starting another',
  })
  @ApiOkResponse({
    type: ChatAnswerDto,
    description: 'JSON mode: the answer once the run finished. Stream mode: text/event-stream whose last event, done, carries this',
  })
  @ApiAcceptedResponse({ type: ChatAnswerDto, description: 'JSON mode: the run had not finished in 120 s; Location names it' })
  @ApiResponse({ status: 403, description: 'Chatting starts runs: it needs the editor or owner role' })
  @ApiResponse({ status: 404, description: 'No such workflow' })
  @ApiResponse({ status: 409, description: "Nothing is published, or the published version's trigger is not chat-trigger" })
  @ApiResponse({
    status: 429,
    description: "The workflow's rate limit (settings.rateLimit) is reached; Retry-After says when to try again",
  })
  async send(
    @CurrentPrincipal() principal: Principal,
    @Param('id') workflowId: string,
    @Body() body: ChatMessageDto,
    @Query() query: ChatQueryDto,
    @Headers('accept') accept: string | undefined,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const accepted = await this.chat.start(principal, workflowId, body, idempotencyKey);
    const { runId, status } = accepted.body;
    void reply.header('location', `/api/v1/runs/${runId}`);
    if (!accepted.created) void reply.header('idempotent-replayed', 'true');

    if (!wantsStream(query.stream, accept)) {
      const answer = await this.chat.wait(runId);
      await reply.status(TERMINAL_RUN_STATUSES.includes(answer.status) ? 200 : 202).send(answer);
      return;
    }

    const stream = new PassThrough();
    const gone = new AbortController();
    // Closed before the stream ended: the client left (the run goes on).
    reply.raw.on('close', () => gone.abort());
    const open = () => !stream.destroyed && !stream.writableEnded;
    const emit = (event: string, data: unknown) => {
      if (open()) stream.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const keepAlive = setInterval(() => open() && stream.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    emit('run', { runId, status });
    void reply
      .status(200)
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no')
      .send(stream);
    void this.chat
      .stream(runId, emit, gone.signal, principal.keyId)
      .catch((error: unknown) => {
        this.logger.error({ err: error, runId }, 'chat stream failed');
        emit('error', { code: 'INTERNAL', message: `Following run ${runId} failed: read it with GET /api/v1/runs/${runId}` });
      })
      .finally(() => {
        clearInterval(keepAlive);
        if (open()) stream.end();
      });
  }
}
