// Over 400 lines on purpose: both MCP HTTP doors (Streamable HTTP and legacy SSE) share session
// bookkeeping, authentication and revocation here; the SDK's transports do the protocol.
import { BeforeApplicationShutdown, Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  ErrorCode as RpcErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiKeyService, presentedKey } from '../../auth/api-key.service';
import { Principal } from '../../auth/principal';
import { AppError, ErrorCode, isAppError } from '../../common/app-error';
import { ROOT_LOGGER } from '../../common/logger';
import { AppConfig } from '../../config/app-config';
import { WorkflowToolEvents, WorkflowToolsService } from '../../workflows/workflow-tools.service';
import { createMcpServer, McpServerOptions, ServiceMcpServer, ToolCallContext } from '../mcp-server.factory';
import { ServicesBackendFactory } from '../in-process/services-backend.adapter';
import {
  readJsonBody,
  RPC_INTERNAL_ERROR,
  RPC_PARSE_ERROR,
  RPC_SERVER_ERROR,
  RPC_SESSION_NOT_FOUND,
  RpcHttpError,
  writeJson,
  writeRpcError,
} from './json-rpc-http';
import { McpSession, McpSessionRegistry, SseSession, StreamableSession } from './mcp-sessions';
import { OriginPolicy } from './origin-policy';

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

const authInfoOf = (principal: Principal): AuthInfo => ({
  token: principal.keyId ?? '',
  clientId: principal.userId,
  scopes: [],
  extra: { principal },
});

/** Workflow tools published in another API process, or newly shared with a user, are announced within this. */
const TOOLS_WATCH_MS = 10_000;

/**
 * How often the keys of the live sessions are read afresh from the store: a key revoked by another
 * process (the CLI, another API process) ends its sessions and streams within this. A revocation
 * through this process ends them at once (ApiKeyService.onRevoked).
 */
const KEYS_CHECK_MS = 1000;

/** 256 bits from the CSPRNG, in the visible ASCII the specification asks for. */
const newSessionId = () => randomBytes(32).toString('base64url');

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/** Shape only (the transport validates the message): the SDK's guards are zod parses that build errors when they fail, on every POST. */
const isInitializeMessage = (message: unknown): boolean => isRecord(message) && message.method === 'initialize' && message.id !== undefined;
const isInitialize = (body: unknown): boolean => (Array.isArray(body) ? body.some(isInitializeMessage) : isInitializeMessage(body));

type ToolCall = { id: RequestId; params: { name: string; arguments?: Record<string, unknown> } };

/** A POST holding one plain tools/call (no batch, no `_meta` or task to honour), or undefined. */
function toolCallOf(body: unknown): ToolCall | undefined {
  if (!isRecord(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !isRecord(body.params)) return undefined;
  const { id, params } = body;
  if (!(typeof id === 'string' || Number.isSafeInteger(id)) || typeof params.name !== 'string') return undefined;
  if ((params.arguments !== undefined && !isRecord(params.arguments)) || params._meta !== undefined || params.task !== undefined)
    return undefined;
  return body as ToolCall;
}

/** Headers the transport would accept without a word; anything else goes to it to be refused. */
function onFastPath(request: FastifyRequest): boolean {
  const accept = header(request, 'accept') ?? '';
  const version = header(request, 'mcp-protocol-version');
  return (
    accept.includes('application/json') &&
    accept.includes('text/event-stream') &&
    (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version))
  );
}

/**
 * The remote MCP endpoints: the SDK's transports (StreamableHTTPServerTransport in JSON response
 * mode, and the legacy SSEServerTransport), one ServiceMcpServer per session, mounted straight on
 * Fastify rather than as Nest controllers and answered from each route's onRequest hook on the raw
 * Node response (`reply.hijack()`): the transports write raw responses, errors must stay JSON-RPC
 * shaped, and a tool call should not pay for the Nest pipeline nor fastify's body parser on top of
 * the MCP one. Fastify still routes, names and logs the request.
 *
 * What the transports leave to their host is here: the API key on every request (the ApiKeyService
 * the REST guard uses; the caller reaches the tools as `authInfo.extra.principal`), the Origin
 * policy, the JSON body (size limit, poisoned keys, depth), and the sessions: bound to the user who
 * opened them, capped per user, expired when idle (McpSessionRegistry).
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
  private toolsWatch?: NodeJS.Timeout;
  private toolsStamp?: string;
  private keysWatch?: NodeJS.Timeout;
  private checkingKeys = false;
  private readonly unsubscribe: (() => void)[] = [];

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
    this.origins = new OriginPolicy(config.MCP_ALLOWED_ORIGINS, config.HOST);
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
    this.unsubscribe.push(this.toolEvents.onChange(() => void this.syncWorkflowTools()));
    this.toolsWatch = setInterval(() => void this.checkToolsStamp(), TOOLS_WATCH_MS);
    this.toolsWatch.unref();
    this.unsubscribe.push(this.apiKeys.onRevoked((keyId) => void this.sessions.closeUsingKey(keyId)));
    this.keysWatch = setInterval(() => void this.checkKeys(), KEYS_CHECK_MS);
    this.keysWatch.unref();
  }

  /**
   * Each key of a live session read afresh, one store read per key (not per session or stream) a
   * second; a key revoked or whose user is gone ends its sessions. A store that does not answer
   * ends nothing: the next look tries again.
   */
  private async checkKeys(): Promise<void> {
    if (this.checkingKeys || this.sessions.size === 0) return;
    this.checkingKeys = true;
    try {
      await Promise.all(
        [...this.sessions.keyIds()].map(async (keyId) => {
          if (!(await this.apiKeys.isStillValid(keyId))) await this.sessions.closeUsingKey(keyId);
        }),
      );
    } catch (error) {
      this.logger.warn({ err: error }, 'checking the API keys of the MCP sessions failed');
    } finally {
      this.checkingKeys = false;
    }
  }

  /**
   * Lists each user's workflow tools once and registers them in each of that user's sessions;
   * McpServer tells a session's client `notifications/tools/list_changed` only when its list changed,
   * so a session whose user cannot see a changed tool hears nothing of it.
   */
  private async syncWorkflowTools(): Promise<void> {
    this.toolsStamp = await this.workflowTools.stamp().catch(() => this.toolsStamp);
    const users = [...this.sessions.byUserId().values()].map((sessions) => [...sessions]);
    await Promise.allSettled(
      users.map(async (sessions) => {
        const listed = await this.backends.forPrincipal(sessions[0].principal).listWorkflowTools();
        for (const session of sessions) session.server.setWorkflowTools(listed);
      }),
    );
  }

  /** A stamp read afresh: what another process published shows here within TOOLS_WATCH_MS. */
  private async checkToolsStamp(): Promise<void> {
    if (this.sessions.size === 0) return;
    try {
      const stamp = await this.workflowTools.stamp();
      // Roles change without changing the stamp: every look lists each user's tools again.
      this.toolsStamp = stamp;
      await this.syncWorkflowTools();
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
    route('GET', MCP_PATH, (request, response) => this.streamableSessionRequest(request, response));
    route('DELETE', MCP_PATH, (request, response) => this.streamableSessionRequest(request, response));
    route('GET', SSE_PATH, (request, response) => this.sseOpen(request, response));
    route('POST', SSE_MESSAGES_PATH, (request, response) => this.sseMessage(request, response));
    for (const url of [MCP_PATH, SSE_PATH, SSE_MESSAGES_PATH])
      route('OPTIONS', url, (request, response) => this.preflight(request, response));
  }

  /** Before the HTTP server closes, which would otherwise wait forever on the open streams. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.toolsWatch);
    clearInterval(this.keysWatch);
    for (const unsubscribe of this.unsubscribe) unsubscribe();
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
    if (body === undefined) throw new RpcHttpError(400, RPC_PARSE_ERROR, 'Parse error: the request has no JSON-RPC body');
    const caller = request.raw as Caller;
    caller.auth = authInfoOf(principal);
    // A stale Mcp-Session-Id on an initialize is a client recovering from an expired session: it gets a new one.
    if (isInitialize(body)) return this.openStreamableSession(principal, caller, response, body);
    const session = this.streamableSession(request, principal);
    const call = toolCallOf(body);
    if (call && onFastPath(request)) {
      const answer = await session.server.answerToolCall(call.id, call.params.name, call.params.arguments ?? {}, { authInfo: caller.auth });
      return writeJson(response, 200, JSON.stringify(answer), session.id);
    }
    await session.transport.handleRequest(caller, response, body);
    releaseAnsweredPosts(session.transport);
  }

  /** GET opens the session's stream of server-initiated messages; DELETE ends the session. */
  private async streamableSessionRequest(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const principal = await this.admit(request, response);
    const session = this.streamableSession(request, principal);
    if (request.method === 'GET') this.sessions.holdOpen(session, response);
    await session.transport.handleRequest(request.raw, response);
  }

  /** The caller's session named by Mcp-Session-Id, or the refusal to answer. */
  private streamableSession(request: FastifyRequest, principal: Principal): StreamableSession {
    const sessionId = header(request, 'mcp-session-id');
    if (sessionId === undefined)
      throw new RpcHttpError(400, RPC_SERVER_ERROR, 'Bad Request: no Mcp-Session-Id header; start with an initialize request');
    const session = this.sessions.find(sessionId, principal.userId, 'streamable-http');
    if (!session) throw sessionNotFound();
    usedBy(session, principal);
    return session;
  }

  /** A session exists once its initialize succeeded; a refused one leaves nothing behind. */
  private async openStreamableSession(principal: Principal, caller: Caller, response: ServerResponse, body: unknown): Promise<void> {
    const server = await this.newServer(principal);
    let session: StreamableSession | undefined;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: newSessionId,
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        session = {
          kind: 'streamable-http',
          id,
          userId: principal.userId,
          principal,
          keyIds: keysOf(principal),
          server,
          transport,
          lastActive: Date.now(),
          openStreams: 0,
        };
        this.sessions.add(session);
      },
    });
    answerCancelledRequests(transport);
    server.mcp.server.onclose = () => session && this.sessions.remove(session.id);
    await server.mcp.connect(transport);
    await transport.handleRequest(caller, response, body);
    if (!server.mcp.server.getClientVersion()) await (session ? this.sessions.close(session) : server.mcp.close());
  }

  private async sseOpen(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const principal = await this.admit(request, response);
    const server = await this.newServer(principal);
    const transport = new SSEServerTransport(SSE_MESSAGES_PATH, response);
    const session: SseSession = {
      kind: 'sse',
      id: transport.sessionId,
      userId: principal.userId,
      principal,
      keyIds: keysOf(principal),
      server,
      transport,
      stream: response,
      lastActive: Date.now(),
      openStreams: 0,
    };
    this.sessions.add(session);
    this.sessions.holdOpen(session, response);
    server.mcp.server.onclose = () => this.sessions.remove(session.id);
    try {
      await server.mcp.connect(transport);
    } catch (error) {
      request.log.error({ err: error }, 'MCP SSE stream failed to start');
      await this.sessions.close(session);
      response.destroy();
    }
  }

  private async sseMessage(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const principal = await this.admit(request, response);
    const sessionId = (request.query as { sessionId?: unknown }).sessionId;
    if (typeof sessionId !== 'string')
      throw new RpcHttpError(400, RPC_SERVER_ERROR, 'Bad Request: the sessionId query parameter is required');
    const body = await readJsonBody(request.raw, this.bodyLimit);
    if (body === undefined) throw new RpcHttpError(400, RPC_PARSE_ERROR, 'Parse error: the request has no JSON-RPC body');
    const session = this.sessions.find(sessionId, principal.userId, 'sse');
    if (!session) throw sessionNotFound();
    usedBy(session, principal);
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

  /** A session's server, with the caller's workflow tools registered before its client can list them. */
  private async newServer(principal: Principal): Promise<ServiceMcpServer> {
    const server = createMcpServer(this.tools);
    await server.syncWorkflowTools({ authInfo: authInfoOf(principal) });
    return server;
  }
}

/**
 * The SDK Server never answers a request the client cancelled (as the specification allows), and
 * the transport in JSON response mode holds the POST carrying it open until every request in it is
 * answered: it would never end. The cancelled request is answered at once with an error the
 * client, which gave up on it, ignores; the server's late answer, if any, finds no POST and is dropped.
 * The transport calls this before handing each message to the server (Protocol.connect keeps it).
 */
function answerCancelledRequests(transport: StreamableHTTPServerTransport): void {
  transport.onmessage = (message: JSONRPCMessage) => {
    if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return;
    const requestId = (message.params as { requestId?: string | number } | undefined)?.requestId;
    if (requestId === undefined) return;
    transport
      .send({ jsonrpc: '2.0', id: requestId, error: { code: RpcErrorCode.ConnectionClosed, message: 'Request cancelled by the client' } })
      // Already answered: nothing awaits it any more.
      .catch(() => undefined);
  };
}

/**
 * SDK 1.32's transport in JSON response mode keeps an entry for every POST it answered until the
 * session closes (modelcontextprotocol/typescript-sdk#2559, fixed on its main branch only): a
 * session's memory, and the time of each of its requests, would grow with every call.
 */
function releaseAnsweredPosts(transport: StreamableHTTPServerTransport): void {
  const inner = (
    transport as unknown as {
      _webStandardTransport: { _streamMapping: Map<string, { resolveJson?: unknown }>; _requestToStreamMapping: Map<unknown, string> };
    }
  )._webStandardTransport;
  const awaited = new Set(inner._requestToStreamMapping.values());
  for (const [streamId, stream] of inner._streamMapping)
    if (stream.resolveJson && !awaited.has(streamId)) inner._streamMapping.delete(streamId);
}

const keysOf = (principal: Principal): Set<string> => new Set(principal.keyId ? [principal.keyId] : []);

function usedBy(session: McpSession, principal: Principal): void {
  session.principal = principal;
  if (principal.keyId) session.keyIds.add(principal.keyId);
}

function principalOf(context: ToolCallContext): Principal {
  const principal = context.authInfo?.extra?.principal as Principal | undefined;
  if (!principal) throw new AppError(ErrorCode.UNAUTHENTICATED, 'No authenticated caller on this MCP request');
  return principal;
}

/** Unknown, expired, closed and other users' sessions all answer the same (MCP spec: 404). */
const sessionNotFound = () =>
  new RpcHttpError(404, RPC_SESSION_NOT_FOUND, 'Session not found: start a new session with an initialize request');

const forbiddenOrigin = (origin: string | undefined) =>
  new RpcHttpError(403, RPC_SERVER_ERROR, `Forbidden: Origin ${origin} is not allowed (MCP_ALLOWED_ORIGINS)`);
