import { BeforeApplicationShutdown, Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { WorkflowToolEvents, WorkflowToolsService } from '../../workflows/workflow-tools.service';
import { HttpAdapterHost } from '@nestjs/core';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { JSONRPCMessage, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiKeyService, presentedKey } from '../../auth/api-key.service';
import { Principal } from '../../auth/principal';
import { AppError, ErrorCode, isAppError } from '../../common/app-error';
import { ROOT_LOGGER } from '../../common/logger';
import { AppConfig } from '../../config/app-config';
import { createMcpServer, McpServerOptions, ToolCallContext, ToolRequestShortcut, toolRequestShortcut } from '../mcp-server.factory';
import { ServicesBackendFactory } from '../services-backend.adapter';
import { readJsonBody, RPC_INTERNAL_ERROR, RPC_INVALID_REQUEST, RPC_PARSE_ERROR, RPC_SERVER_ERROR, RPC_SESSION_NOT_FOUND, RpcHttpError, writeJson, writeRpcError } from './json-rpc-http';
import { McpSessionRegistry, SseSession, StreamableSession } from './mcp-sessions';
import { OriginPolicy } from './origin-policy';
import { isInitialize, isRequest, jsonRpcMessages, StreamableHttpTransport } from './streamable-http.transport';

export const MCP_PATH = '/mcp';
export const SSE_PATH = '/sse';
export const SSE_MESSAGES_PATH = '/messages';

type Caller = IncomingMessage & { auth?: AuthInfo };
/** An MCP route: it answers on the raw Node response (see McpHttpEndpoints). */
type RawHandler = (request: FastifyRequest, response: ServerResponse) => Promise<void>;

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** No Accept header accepts anything. */
const accepts = (request: FastifyRequest, type: string): boolean => {
  const accept = header(request, 'accept');
  return accept === undefined || accept.includes(type) || accept.includes('*/*');
};

const authInfoOf = (principal: Principal): AuthInfo => ({ token: principal.keyId ?? '', clientId: principal.userId, scopes: [], extra: { principal } });

/** Workflow tools published in another API process are announced within this. */
const TOOLS_WATCH_MS = 10_000;

/**
 * The remote MCP endpoints, mounted straight on Fastify rather than as Nest controllers, and
 * answered from each route's onRequest hook on the raw Node response (`reply.hijack()`): errors
 * must stay JSON-RPC shaped, streams are written raw, and a tool call should not pay for the Nest
 * pipeline, nor for fastify's body parser and reply pipeline, on top of the MCP one (on Node 20 the
 * parser alone binds an AsyncResource per request, two deprecation wrappers each time). Fastify
 * still routes, names and logs the request (onResponse hooks run on the raw response too).
 * Authentication is the ApiKeyService the REST guard uses, on every request; the caller reaches the
 * tools as `authInfo.extra.principal`.
 *
 * Streamable HTTP: POST/GET/DELETE /mcp. Legacy SSE: GET /sse, then POST /messages?sessionId=.
 */
@Injectable()
export class McpHttpEndpoints implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly sessions: McpSessionRegistry;
  private readonly origins: OriginPolicy;
  private readonly bodyLimit: number;
  private readonly tools: McpServerOptions = {
    backend: (context) => this.backends.forPrincipal(principalOf(context)),
    onUnexpectedError: (error, tool) => this.logger.error({ err: error, tool }, 'MCP tool failed'),
  };
  private readonly shortcut: ToolRequestShortcut = toolRequestShortcut(this.tools);
  /** Workflow tools published elsewhere (another API process) are noticed this often. */
  private toolsWatch?: NodeJS.Timeout;
  private toolsStamp?: string;
  private stopWatchingEvents?: () => void;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly apiKeys: ApiKeyService,
    private readonly backends: ServicesBackendFactory,
    private readonly workflowTools: WorkflowToolsService,
    private readonly toolEvents: WorkflowToolEvents,
    config: AppConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'mcp' });
    this.bodyLimit = config.BODY_LIMIT_BYTES;
    this.sessions = new McpSessionRegistry({ idleMs: config.MCP_SESSION_IDLE_MS, maxPerUser: config.MCP_MAX_SESSIONS_PER_USER });
    this.origins = new OriginPolicy(config.MCP_ALLOWED_ORIGINS);
  }

  /** Live sessions of this process. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  onModuleInit(): void {
    // A worker process (APP_ROLE=worker) has no HTTP server and serves no MCP.
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    void fastify.register(async (scope) => this.registerRoutes(scope));
    this.sessions.startSweeping();
    this.stopWatchingEvents = this.toolEvents.onChange(() => void this.announceToolsChanged());
    this.toolsWatch = setInterval(() => void this.checkToolsStamp(), TOOLS_WATCH_MS);
    this.toolsWatch.unref();
  }

  /** A workflow tool was published or removed: every session is told to list its tools again. */
  private async announceToolsChanged(): Promise<void> {
    this.toolsStamp = await this.workflowTools.stamp().catch(() => this.toolsStamp);
    await Promise.allSettled(this.sessions.all().map((session) => session.server.notification({ method: 'notifications/tools/list_changed' })));
  }

  private async checkToolsStamp(): Promise<void> {
    if (this.sessions.size === 0) return;
    try {
      const stamp = await this.workflowTools.stamp();
      if (this.toolsStamp !== undefined && stamp !== this.toolsStamp) await this.announceToolsChanged();
      this.toolsStamp = stamp;
    } catch (error) {
      this.logger.warn({ err: error }, 'checking the workflow tools failed');
    }
  }

  private registerRoutes(scope: FastifyInstance): void {
    const route = (method: HTTPMethods, url: string, handle: RawHandler) =>
      scope.route({
        method,
        url,
        exposeHeadRoute: false,
        onRequest: (request, reply, done) => {
          reply.hijack();
          this.serve(handle, request, reply.raw);
          done();
        },
        // Never reached: the onRequest hook above has answered.
        handler: () => undefined,
      });
    route('POST', MCP_PATH, (request, response) => this.streamablePost(request, response));
    route('GET', MCP_PATH, (request, response) => this.streamableGet(request, response));
    route('DELETE', MCP_PATH, (request, response) => this.streamableDelete(request, response));
    route('GET', SSE_PATH, (request, response) => this.sseOpen(request, response));
    route('POST', SSE_MESSAGES_PATH, (request, response) => this.sseMessage(request, response));
    for (const url of [MCP_PATH, SSE_PATH, SSE_MESSAGES_PATH]) route('OPTIONS', url, (request, response) => this.preflight(request, response));
  }

  /** Before the HTTP server closes, which would otherwise wait forever on the open streams. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.toolsWatch);
    this.stopWatchingEvents?.();
    await this.sessions.closeAll();
  }

  /** Runs one route's handler; a refusal it throws is answered in JSON-RPC, anything else is a 500. */
  private serve(handle: RawHandler, request: FastifyRequest, response: ServerResponse): void {
    // The onSend hook that names the request everywhere else does not run on a hijacked reply.
    response.setHeader('x-request-id', String(request.id));
    handle(request, response).catch((error: unknown) => {
      const refusal = error instanceof RpcHttpError;
      if (!refusal) request.log.error({ err: error }, 'MCP request failed');
      // Too late for a status: the client sees the connection end instead.
      if (response.headersSent) response.destroy();
      else writeRpcError(response, refusal ? error : new RpcHttpError(500, RPC_INTERNAL_ERROR, 'Internal error'));
    });
  }

  private async streamablePost(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const principal = await this.admit(request, response);
    const body = await readJsonBody(request.raw, this.bodyLimit);
    const messages = jsonRpcMessages(body);
    if (!messages) throw new RpcHttpError(400, RPC_INVALID_REQUEST, 'Invalid Request: send a JSON-RPC 2.0 message, or a batch of them');
    if (!accepts(request, 'application/json')) throw new RpcHttpError(406, RPC_SERVER_ERROR, 'Not Acceptable: the client must accept application/json');
    const caller = { authInfo: authInfoOf(principal) };
    const initialize = messages.find(isInitialize);
    if (initialize) {
      if (messages.length > 1) throw new RpcHttpError(400, RPC_INVALID_REQUEST, 'Invalid Request: initialize must be sent on its own');
      // A stale Mcp-Session-Id on an initialize is a client recovering from an expired session: it gets a new one.
      return this.openStreamableSession(principal, initialize, caller, response);
    }
    const session = this.streamableSession(request, principal);
    const reused = messages.find((message) => isRequest(message) && session.transport.isAwaiting(message.id!));
    if (reused) throw new RpcHttpError(400, RPC_INVALID_REQUEST, `Invalid Request: request id ${reused.id} is already in flight in this session`);
    const responses = await session.transport.exchange(messages, caller);
    if (responses.length === 0) return void response.writeHead(202).end();
    writeJson(response, 200, JSON.stringify(Array.isArray(body) ? responses : responses[0]), session.id);
  }

  /** GET opens the session's stream of server-initiated messages. */
  private async streamableGet(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const principal = await this.admit(request, response);
    const session = this.streamableSession(request, principal);
    if (!accepts(request, 'text/event-stream')) throw new RpcHttpError(406, RPC_SERVER_ERROR, 'Not Acceptable: the client must accept text/event-stream');
    if (session.transport.stream) throw new RpcHttpError(409, RPC_SERVER_ERROR, 'Conflict: this session already has an open stream');
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'mcp-session-id': session.id,
    });
    response.flushHeaders();
    session.transport.attachStream(response);
    this.sessions.holdOpen(session, response);
  }

  private async streamableDelete(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const principal = await this.admit(request, response);
    const session = this.streamableSession(request, principal);
    await this.sessions.close(session);
    response.writeHead(200).end();
  }

  /** The caller's session named by Mcp-Session-Id, or the refusal to answer. */
  private streamableSession(request: FastifyRequest, principal: Principal): StreamableSession {
    const sessionId = header(request, 'mcp-session-id');
    if (sessionId === undefined) throw new RpcHttpError(400, RPC_SERVER_ERROR, 'Bad Request: no Mcp-Session-Id header; start with an initialize request');
    const session = this.sessions.find(sessionId, principal.userId, 'streamable-http');
    if (!session) throw sessionNotFound();
    const version = header(request, 'mcp-protocol-version');
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      throw new RpcHttpError(400, RPC_SERVER_ERROR, `Bad Request: unsupported MCP-Protocol-Version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    }
    return session;
  }

  /** A session exists once its initialize succeeded; a refused one leaves nothing behind. */
  private async openStreamableSession(principal: Principal, initialize: JSONRPCMessage, caller: { authInfo: AuthInfo }, response: ServerResponse): Promise<void> {
    // 256 bits from the CSPRNG, in the visible ASCII the specification asks for.
    const transport = new StreamableHttpTransport(randomBytes(32).toString('base64url'), this.shortcut);
    const server = this.newServer();
    await server.connect(transport);
    const [answer] = await transport.exchange([initialize], caller);
    if (!('result' in answer)) {
      await server.close();
      return writeJson(response, 200, JSON.stringify(answer));
    }
    const session: StreamableSession = { kind: 'streamable-http', id: transport.sessionId, userId: principal.userId, server, transport, lastActive: Date.now(), openStreams: 0 };
    server.onclose = () => this.sessions.remove(session.id);
    this.sessions.add(session);
    writeJson(response, 200, JSON.stringify(answer), session.id);
  }

  private async sseOpen(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const principal = await this.admit(request, response);
    const server = this.newServer();
    const transport = new SSEServerTransport(SSE_MESSAGES_PATH, response);
    const session: SseSession = { kind: 'sse', id: transport.sessionId, userId: principal.userId, server, transport, stream: response, lastActive: Date.now(), openStreams: 0 };
    this.sessions.add(session);
    this.sessions.holdOpen(session, response);
    server.onclose = () => this.sessions.remove(session.id);
    try {
      await server.connect(transport);
    } catch (error) {
      request.log.error({ err: error }, 'MCP SSE stream failed to start');
      await this.sessions.close(session);
      response.destroy();
    }
  }

  private async sseMessage(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const principal = await this.admit(request, response);
    const sessionId = (request.query as { sessionId?: unknown }).sessionId;
    if (typeof sessionId !== 'string') throw new RpcHttpError(400, RPC_SERVER_ERROR, 'Bad Request: the sessionId query parameter is required');
    const body = await readJsonBody(request.raw, this.bodyLimit);
    if (body === undefined) throw new RpcHttpError(400, RPC_PARSE_ERROR, 'Parse error: the request has no JSON-RPC body');
    const session = this.sessions.find(sessionId, principal.userId, 'sse');
    if (!session) throw sessionNotFound();
    // The SDK's transport answers on the raw response; the tool handlers find the caller on the request.
    (request.raw as Caller).auth = authInfoOf(principal);
    await session.transport.handlePostMessage(request.raw, response, body);
  }

  private async preflight(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const origin = header(request, 'origin');
    if (!this.origins.allows(origin)) throw forbiddenOrigin(origin);
    this.origins.applyCors(origin, response, true);
    response.writeHead(204).end();
  }

  /** Origin first (a browser on a foreign page learns nothing more), then the API key. */
  private async admit(request: FastifyRequest, response: ServerResponse): Promise<Principal> {
    const origin = header(request, 'origin');
    if (!this.origins.allows(origin)) throw forbiddenOrigin(origin);
    this.origins.applyCors(origin, response);
    const secret = presentedKey(request.headers);
    try {
      return await this.apiKeys.authenticate(secret);
    } catch (error) {
      if (!isAppError(error) || error.code !== ErrorCode.UNAUTHENTICATED) throw error;
      response.setHeader('www-authenticate', secret ? 'Bearer realm="service", error="invalid_token"' : 'Bearer realm="service"');
      throw new RpcHttpError(401, RPC_SERVER_ERROR, `Unauthorized: ${error.message}`, { code: error.code, requestId: String(request.id) });
    }
  }

  private newServer() {
    return createMcpServer(this.tools);
  }
}

function principalOf(context: ToolCallContext): Principal {
  const principal = context.authInfo?.extra?.principal as Principal | undefined;
  if (!principal) throw new AppError(ErrorCode.UNAUTHENTICATED, 'No authenticated caller on this MCP request');
  return principal;
}

/** Unknown, expired, closed and other users' sessions all answer the same (MCP spec: 404). */
const sessionNotFound = () => new RpcHttpError(404, RPC_SESSION_NOT_FOUND, 'Session not found: start a new session with an initialize request');

const forbiddenOrigin = (origin: string | undefined) => new RpcHttpError(403, RPC_SERVER_ERROR, `Forbidden: Origin ${origin} is not allowed (MCP_ALLOWED_ORIGINS)`);
