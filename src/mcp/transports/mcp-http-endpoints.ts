import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { JSONRPCMessage, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApiKeyService, presentedKey } from '../../auth/api-key.service';
import { Principal } from '../../auth/principal';
import { AppError, ErrorCode, isAppError } from '../../common/app-error';
import { AppConfig } from '../../config/app-config';
import { createMcpServer, McpServerOptions, ToolCallContext, ToolRequestShortcut, toolRequestShortcut } from '../mcp-server.factory';
import { ServicesBackendFactory } from '../services-backend.adapter';
import { McpSessionRegistry, SseSession, StreamableSession } from './mcp-sessions';
import { OriginPolicy } from './origin-policy';
import { isInitialize, isRequest, jsonRpcMessages, StreamableHttpTransport } from './streamable-http.transport';

export const MCP_PATH = '/mcp';
export const SSE_PATH = '/sse';
export const SSE_MESSAGES_PATH = '/messages';

/** JSON-RPC error codes used at the HTTP level, as the SDK's own transport answers them. */
const RPC_SERVER_ERROR = -32000;
const RPC_SESSION_NOT_FOUND = -32001;
const RPC_PARSE_ERROR = -32700;
const RPC_INVALID_REQUEST = -32600;
const RPC_INTERNAL_ERROR = -32603;

type Caller = IncomingMessage & { auth?: AuthInfo };

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

/**
 * The remote MCP endpoints, mounted straight on Fastify rather than as Nest controllers: errors
 * must stay JSON-RPC shaped, streams are written raw, and a tool call should not pay for the Nest
 * pipeline on top of the MCP one. Authentication is the ApiKeyService the REST guard uses, on every
 * request; the caller reaches the tools as `authInfo.extra.principal`.
 *
 * Streamable HTTP: POST/GET/DELETE /mcp. Legacy SSE: GET /sse, then POST /messages?sessionId=.
 */
@Injectable()
export class McpHttpEndpoints implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(McpHttpEndpoints.name);
  private readonly sessions: McpSessionRegistry;
  private readonly origins: OriginPolicy;
  private readonly tools: McpServerOptions = {
    backend: (context) => this.backends.forPrincipal(principalOf(context)),
    onUnexpectedError: (error, tool) => this.logger.error({ err: error, tool }, 'MCP tool failed'),
  };
  private readonly shortcut: ToolRequestShortcut = toolRequestShortcut(this.tools);

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly apiKeys: ApiKeyService,
    private readonly backends: ServicesBackendFactory,
    config: AppConfig,
  ) {
    this.sessions = new McpSessionRegistry(config.MCP_SESSION_IDLE_MS);
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
  }

  /** In its own Fastify scope, so the lenient JSON parser below applies to these routes only. */
  private registerRoutes(scope: FastifyInstance): void {
    // A GET or DELETE may carry Content-Type: application/json and no body; that is not a parse error.
    const parseJson = scope.getDefaultJsonParser('error', 'error');
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
      body === '' ? done(null, undefined) : parseJson(request, body as string, done),
    );
    scope.setErrorHandler((error: FastifyError, request, reply) => this.onRouteError(error, request, reply));
    const route = (method: HTTPMethods | HTTPMethods[], url: string, handler: (request: FastifyRequest, reply: FastifyReply) => Promise<void> | void) =>
      scope.route({ method, url, handler, exposeHeadRoute: false });
    route('POST', MCP_PATH, (request, reply) => this.streamablePost(request, reply));
    route('GET', MCP_PATH, (request, reply) => this.streamableGet(request, reply));
    route('DELETE', MCP_PATH, (request, reply) => this.streamableDelete(request, reply));
    route('GET', SSE_PATH, (request, reply) => this.sseOpen(request, reply));
    route('POST', SSE_MESSAGES_PATH, (request, reply) => this.sseMessage(request, reply));
    for (const url of [MCP_PATH, SSE_PATH, SSE_MESSAGES_PATH]) route('OPTIONS', url, (request, reply) => this.preflight(request, reply));
  }

  /** Before the HTTP server closes, which would otherwise wait forever on the open streams. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.sessions.closeAll();
  }

  private async streamablePost(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await this.admit(request, reply);
    if (!principal) return;
    const messages = jsonRpcMessages(request.body);
    if (!messages) return rpcError(reply, 400, RPC_INVALID_REQUEST, 'Invalid Request: send a JSON-RPC 2.0 message, or a batch of them');
    if (!accepts(request, 'application/json')) return rpcError(reply, 406, RPC_SERVER_ERROR, 'Not Acceptable: the client must accept application/json');
    const caller = { authInfo: authInfoOf(principal) };
    const initialize = messages.find(isInitialize);
    if (initialize) {
      if (messages.length > 1) return rpcError(reply, 400, RPC_INVALID_REQUEST, 'Invalid Request: initialize must be sent on its own');
      // A stale Mcp-Session-Id on an initialize is a client recovering from an expired session: it gets a new one.
      return this.openStreamableSession(principal, initialize, caller, reply);
    }
    const session = this.streamableSession(request, reply, principal);
    if (!session) return;
    const reused = messages.find((message) => isRequest(message) && session.transport.isAwaiting(message.id!));
    if (reused) return rpcError(reply, 400, RPC_INVALID_REQUEST, `Invalid Request: request id ${reused.id} is already in flight in this session`);
    const responses = await session.transport.exchange(messages, caller);
    if (responses.length === 0) return void reply.code(202).send();
    sendJson(reply.header('mcp-session-id', session.id), Array.isArray(request.body) ? responses : responses[0]);
  }

  /** GET opens the session's stream of server-initiated messages. */
  private async streamableGet(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await this.admit(request, reply);
    if (!principal) return;
    const session = this.streamableSession(request, reply, principal);
    if (!session) return;
    if (!accepts(request, 'text/event-stream')) return rpcError(reply, 406, RPC_SERVER_ERROR, 'Not Acceptable: the client must accept text/event-stream');
    if (session.transport.stream) return rpcError(reply, 409, RPC_SERVER_ERROR, 'Conflict: this session already has an open stream');
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'mcp-session-id': session.id,
    });
    raw.flushHeaders();
    session.transport.attachStream(raw);
    this.sessions.holdOpen(session, raw);
  }

  private async streamableDelete(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await this.admit(request, reply);
    if (!principal) return;
    const session = this.streamableSession(request, reply, principal);
    if (!session) return;
    await this.sessions.close(session);
    void reply.code(200).send();
  }

  /** The caller's session named by Mcp-Session-Id; otherwise answers the request and returns nothing. */
  private streamableSession(request: FastifyRequest, reply: FastifyReply, principal: Principal): StreamableSession | undefined {
    const sessionId = header(request, 'mcp-session-id');
    if (sessionId === undefined) {
      rpcError(reply, 400, RPC_SERVER_ERROR, 'Bad Request: no Mcp-Session-Id header; start with an initialize request');
      return undefined;
    }
    const session = this.sessions.find(sessionId, principal.userId, 'streamable-http');
    if (!session) {
      sessionNotFound(reply);
      return undefined;
    }
    const version = header(request, 'mcp-protocol-version');
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      rpcError(reply, 400, RPC_SERVER_ERROR, `Bad Request: unsupported MCP-Protocol-Version ${version} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
      return undefined;
    }
    return session;
  }

  /** A session exists once its initialize succeeded; a refused one leaves nothing behind. */
  private async openStreamableSession(
    principal: Principal,
    initialize: JSONRPCMessage,
    caller: { authInfo: AuthInfo },
    reply: FastifyReply,
  ): Promise<void> {
    // 256 bits from the CSPRNG, in the visible ASCII the specification asks for.
    const transport = new StreamableHttpTransport(randomBytes(32).toString('base64url'), this.shortcut);
    const server = this.newServer();
    await server.connect(transport);
    const [response] = await transport.exchange([initialize], caller);
    if (!('result' in response)) {
      await server.close();
      return sendJson(reply, response);
    }
    const session: StreamableSession = { kind: 'streamable-http', id: transport.sessionId, userId: principal.userId, server, transport, lastActive: Date.now(), openStreams: 0 };
    server.onclose = () => this.sessions.remove(session.id);
    this.sessions.add(session);
    sendJson(reply.header('mcp-session-id', session.id), response);
  }

  private async sseOpen(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await this.admit(request, reply);
    if (!principal) return;
    reply.hijack();
    const server = this.newServer();
    const transport = new SSEServerTransport(SSE_MESSAGES_PATH, reply.raw);
    const session: SseSession = {
      kind: 'sse',
      id: transport.sessionId,
      userId: principal.userId,
      server,
      transport,
      stream: reply.raw,
      lastActive: Date.now(),
      openStreams: 0,
    };
    this.sessions.add(session);
    this.sessions.holdOpen(session, reply.raw);
    server.onclose = () => this.sessions.remove(session.id);
    try {
      await server.connect(transport);
    } catch (error) {
      request.log.error({ reqId: request.id, err: error }, 'MCP SSE stream failed to start');
      await this.sessions.close(session);
      reply.raw.destroy();
    }
  }

  private async sseMessage(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const principal = await this.admit(request, reply);
    if (!principal) return;
    const sessionId = (request.query as { sessionId?: unknown }).sessionId;
    if (typeof sessionId !== 'string') return rpcError(reply, 400, RPC_SERVER_ERROR, 'Bad Request: the sessionId query parameter is required');
    if (request.body === undefined) return rpcError(reply, 400, RPC_PARSE_ERROR, 'Parse error: the request has no JSON-RPC body');
    const session = this.sessions.find(sessionId, principal.userId, 'sse');
    if (!session) return sessionNotFound(reply);
    await this.handOver(request, reply, principal, () => session.transport.handlePostMessage(request.raw, reply.raw, request.body));
  }

  private preflight(request: FastifyRequest, reply: FastifyReply): void {
    const origin = header(request, 'origin');
    if (!this.origins.allows(origin)) return forbiddenOrigin(reply, origin);
    this.origins.applyCors(origin, reply.raw, true);
    void reply.code(204).send();
  }

  /** Origin first (a browser on a foreign page learns nothing more), then the API key. */
  private async admit(request: FastifyRequest, reply: FastifyReply): Promise<Principal | undefined> {
    const origin = header(request, 'origin');
    if (!this.origins.allows(origin)) {
      forbiddenOrigin(reply, origin);
      return undefined;
    }
    this.origins.applyCors(origin, reply.raw);
    // Streams are written raw and skip the onSend hook that names the request everywhere else.
    reply.raw.setHeader('x-request-id', String(request.id));
    const secret = presentedKey(request.headers);
    try {
      return await this.apiKeys.authenticate(secret);
    } catch (error) {
      if (!isAppError(error) || error.code !== ErrorCode.UNAUTHENTICATED) throw error;
      const challenge = secret ? 'Bearer realm="service", error="invalid_token"' : 'Bearer realm="service"';
      void reply.header('www-authenticate', challenge);
      rpcError(reply, 401, RPC_SERVER_ERROR, `Unauthorized: ${error.message}`, { code: error.code, requestId: String(request.id) });
      return undefined;
    }
  }

  /** Gives the raw request to the SDK's SSE transport, with the caller attached for the tool handlers. */
  private async handOver(request: FastifyRequest, reply: FastifyReply, principal: Principal, handle: () => Promise<void>): Promise<void> {
    reply.hijack();
    (request.raw as Caller).auth = authInfoOf(principal);
    try {
      await handle();
    } catch (error) {
      request.log.error({ reqId: request.id, err: error }, 'MCP transport failed');
      const raw = reply.raw;
      if (raw.headersSent) raw.destroy();
      else raw.writeHead(500, { 'content-type': 'application/json' }).end(rpcBody(RPC_INTERNAL_ERROR, 'Internal error'));
    }
  }

  private newServer() {
    return createMcpServer(this.tools);
  }

  /** Body parsing fails before our handler: answer in JSON-RPC, not in the REST error shape. */
  private onRouteError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    const status = error.statusCode ?? 500;
    if (status === 415) return rpcError(reply, 415, RPC_SERVER_ERROR, 'Unsupported Media Type: Content-Type must be application/json');
    if (status === 413) return rpcError(reply, 413, RPC_SERVER_ERROR, 'Payload Too Large');
    if (status >= 400 && status < 500) return rpcError(reply, 400, RPC_PARSE_ERROR, `Parse error: ${error.message}`);
    request.log.error({ reqId: request.id, err: error }, 'MCP request failed');
    rpcError(reply, 500, RPC_INTERNAL_ERROR, 'Internal error');
  }
}

function principalOf(context: ToolCallContext): Principal {
  const principal = context.authInfo?.extra?.principal as Principal | undefined;
  if (!principal) throw new AppError(ErrorCode.UNAUTHENTICATED, 'No authenticated caller on this MCP request');
  return principal;
}

const rpcBody = (code: number, message: string, data?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id: null });

function rpcError(reply: FastifyReply, status: number, code: number, message: string, data?: unknown): void {
  void reply.code(status).header('content-type', 'application/json').send(rpcBody(code, message, data));
}

function sendJson(reply: FastifyReply, body: unknown): void {
  void reply.header('content-type', 'application/json').send(JSON.stringify(body));
}

/** Unknown, expired, closed and other users' sessions all answer the same (MCP spec: 404). */
function sessionNotFound(reply: FastifyReply): void {
  rpcError(reply, 404, RPC_SESSION_NOT_FOUND, 'Session not found: start a new session with an initialize request');
}

function forbiddenOrigin(reply: FastifyReply, origin: string | undefined): void {
  rpcError(reply, 403, RPC_SERVER_ERROR, `Forbidden: Origin ${origin} is not allowed (MCP_ALLOWED_ORIGINS)`);
}
