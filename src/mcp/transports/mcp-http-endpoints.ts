// Over 400 lines on purpose: the MCP HTTP doors (2026-07-28 requests and 2025 sessions on /mcp,
// legacy SSE on /sse) share authentication, the Origin and Host rules, the body reader and the
// sessions' bookkeeping here; the SDK's entry and transports do the protocol.
import { BeforeApplicationShutdown, Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { localhostHostValidation, hostHeaderValidation } from '@modelcontextprotocol/fastify';
import { NodeMcpRequestHandler, NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import {
  AuthInfo,
  classifyInboundRequest,
  createMcpHandler,
  createRequestStateCodec,
  localhostAllowedHostnames,
  McpHttpHandler,
  RequestId,
} from '@modelcontextprotocol/server';
import { SSEServerTransport } from '@modelcontextprotocol/server-legacy/sse';
import type { FastifyInstance, FastifyRequest, HTTPMethods, onRequestHookHandler } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiKeyService } from '../../auth/api-key.service';
import { Principal } from '../../auth/principal';
import { ROOT_LOGGER } from '../../common/logger';
import { SecretCipher } from '../../common/secret-cipher';
import { AppConfig } from '../../config/app-config';
import { WorkflowToolEvents, WorkflowToolsService } from '../../workflows/workflow-tools.service';
import { ServicesBackendFactory } from '../in-process/services-backend.adapter';
import { McpEra } from '../mcp-call';
import { answerCollectionToolCall, createMcpServer, McpServerOptions, ServiceMcpServer } from '../mcp-server.factory';
import { workflowToolFingerprint } from '../tools/tool-listing';
import { FollowState } from '../workflow-calls';
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
import { UserScopedEventBus } from './listen-bus';
import { authInfoOf, McpAuthentication, McpCaller, principalOf } from './mcp-auth';
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

/** Workflow tools published in another API process, or newly shared with a user, are announced within this. */
const TOOLS_WATCH_MS = 10_000;

/**
 * How often the keys of the live sessions are read afresh from the store: a key revoked by another
 * process (the CLI, another API process) ends its sessions and streams within this. A revocation
 * through this process ends them at once (ApiKeyService.onRevoked).
 */
const KEYS_CHECK_MS = 1000;

/** A workflow call's state between rounds (an approval asked, a form to fill) lasts a day. */
const REQUEST_STATE_TTL_SECONDS = 24 * 60 * 60;
const MODERN_REVISION = '2026-07-28';

/** 256 bits from the CSPRNG, in the visible ASCII the specification asks for. */
const newSessionId = () => randomBytes(32).toString('base64url');

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

type ToolCall = { id: RequestId; params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> } };

/** One plain tools/call (no batch, no task, no retried round), or undefined. */
function toolCallOf(body: unknown): ToolCall | undefined {
  if (!isRecord(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !isRecord(body.params)) return undefined;
  const { id, params } = body;
  if (!(typeof id === 'string' || Number.isSafeInteger(id)) || typeof params.name !== 'string') return undefined;
  if (params.arguments !== undefined && !isRecord(params.arguments)) return undefined;
  for (const key of Object.keys(params)) if (key !== 'name' && key !== 'arguments' && key !== '_meta') return undefined;
  return body as ToolCall;
}

/** The 2026-07-28 `_meta` of a plain call: exactly the envelope, well formed, and nothing to honour beside it (no progress token). */
function plainEnvelope(meta: Record<string, unknown> | undefined): boolean {
  if (!meta) return false;
  for (const [key, value] of Object.entries(meta)) {
    if (key === 'io.modelcontextprotocol/protocolVersion') {
      if (value !== MODERN_REVISION) return false;
    } else if (key === 'io.modelcontextprotocol/clientCapabilities') {
      if (!isRecord(value)) return false;
    } else if (key === 'io.modelcontextprotocol/clientInfo') {
      if (!isRecord(value) || typeof value.name !== 'string' || typeof value.version !== 'string') return false;
    } else return false;
  }
  return meta['io.modelcontextprotocol/protocolVersion'] === MODERN_REVISION;
}

/** Accept names both answers a client must take (the transports refuse anything less with 406). */
const acceptsBoth = (request: FastifyRequest): boolean => {
  const accept = header(request, 'accept') ?? '';
  return accept.includes('application/json') && accept.includes('text/event-stream');
};

/**
 * The remote MCP endpoints, mounted straight on Fastify rather than as Nest controllers and answered
 * from each route's onRequest hook on the raw Node response (`reply.hijack()`): the SDK writes raw
 * responses, errors must stay JSON-RPC shaped, and a tool call should not pay for the Nest pipeline
 * nor fastify's body parser on top of the MCP one. Fastify still routes, names and logs the request.
 *
 * `/mcp` serves both protocol eras, told apart by the SDK's own classification of each request:
 * - 2026-07-28 requests (the `_meta` envelope, no session): the SDK's `createMcpHandler`, a fresh
 *   server instance per request; `subscriptions/listen` streams carry `list_changed` per user.
 * - 2025-11-25 / 2025-06-18 clients (`initialize`, then `Mcp-Session-Id`): sessions on the SDK's
 *   Streamable HTTP transport, one server instance per session.
 * `/sse` (GET) and `/messages` (POST) serve the deprecated HTTP+SSE transport (the SDK's frozen copy).
 * A plain call of a collection tool skips the SDK's per-request machinery in both eras (see
 * `toolCallOf`): it answers what the SDK would, from the same code, at the cost of a REST call.
 *
 * What the SDK leaves to its host is here: authentication on every request (McpAuthentication, the
 * caller reaching the handlers as `authInfo`), the Origin policy, the Host rule on a loopback
 * listener (against DNS rebinding), the JSON body (size limit, poisoned keys, depth), and the 2025
 * sessions: bound to the user who opened them, capped per user, expired when idle, ended with the
 * key they were used with (McpSessionRegistry).
 */
@Injectable()
export class McpHttpEndpoints implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly sessions: McpSessionRegistry;
  private readonly origins: OriginPolicy;
  private readonly bodyLimit: number;
  private readonly hostRule?: onRequestHookHandler;
  readonly serverOptions: McpServerOptions;
  private readonly listenBus: UserScopedEventBus;
  private readonly modern: McpHttpHandler;
  private readonly modernNode: NodeMcpRequestHandler;
  /** What each user with an open 2026-07-28 listen stream last heard their workflow tools were. */
  private readonly listenedTools = new Map<string, string>();
  private toolsWatch?: NodeJS.Timeout;
  private keysWatch?: NodeJS.Timeout;
  private checkingKeys = false;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly auth: McpAuthentication,
    private readonly apiKeys: ApiKeyService,
    private readonly backends: ServicesBackendFactory,
    private readonly workflowTools: WorkflowToolsService,
    private readonly toolEvents: WorkflowToolEvents,
    cipher: SecretCipher,
    config: AppConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'mcp' });
    this.bodyLimit = config.BODY_LIMIT_BYTES;
    this.sessions = new McpSessionRegistry({ idleMs: config.MCP_SESSION_IDLE_MS, maxPerUser: config.MCP_MAX_SESSIONS_PER_USER });
    this.origins = new OriginPolicy(config.MCP_ALLOWED_ORIGINS, config.HOST);
    if (this.origins.loopback) {
      // On a loopback listener a DNS-rebinding page shows its own host name: only this machine's, and the public URL's, pass.
      const publicHost = config.PUBLIC_URL ? new URL(config.PUBLIC_URL).hostname : undefined;
      this.hostRule = (
        publicHost ? hostHeaderValidation([...localhostAllowedHostnames(), publicHost]) : localhostHostValidation()
      ) as onRequestHookHandler;
    }
    this.serverOptions = {
      backend: (authInfo) => this.backends.forPrincipal(principalOf(authInfo)),
      onUnexpectedError: (error, where) => this.logger.error({ err: error, where }, 'MCP request failed'),
      requestState: createRequestStateCodec<FollowState>({
        key: cipher.deriveKey('mcp-request-state'),
        ttlSeconds: REQUEST_STATE_TTL_SECONDS,
      }),
      toolTimeoutMs: config.MCP_TOOL_TIMEOUT_MS,
    };
    this.listenBus = new UserScopedEventBus((principal) => void this.rememberListenedTools(principal));
    this.modern = createMcpHandler(() => this.newServer('modern').server, {
      // 2025 clients are served by the sessions below; this handler serves the 2026-07-28 requests only.
      legacy: 'reject',
      bus: this.listenBus,
      maxRequestBodySize: this.bodyLimit,
      onerror: (error) => this.logger.debug({ err: error }, 'MCP request refused'),
    });
    this.modernNode = toNodeHandler(this.modern, { maxRequestBodySize: this.bodyLimit });
  }

  /** Live 2025 sessions of this process. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  onModuleInit(): void {
    // A worker process (APP_ROLE=worker) has no HTTP server and serves no MCP.
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return;
    void fastify.register(async (scope) => this.registerRoutes(scope));
    this.sessions.startSweeping();
    this.unsubscribe.push(this.toolEvents.onChange(() => void this.announceWorkflowTools()));
    this.toolsWatch = setInterval(() => void this.announceWorkflowTools(true), TOOLS_WATCH_MS);
    this.toolsWatch.unref();
    this.unsubscribe.push(this.apiKeys.onRevoked((keyId) => void this.sessions.closeUsingKey(keyId)));
    this.keysWatch = setInterval(() => void this.checkKeys(), KEYS_CHECK_MS);
    this.keysWatch.unref();
  }

  /** Before the HTTP server closes, which would otherwise wait forever on the open streams. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.toolsWatch);
    clearInterval(this.keysWatch);
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    await Promise.all([this.sessions.closeAll(), this.modern.close()]);
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
   * Lists each connected user's workflow tools once and tells that user's clients when the list
   * changed: 2025 sessions by `notifications/tools/list_changed` (ServiceMcpServer sends it only when
   * the session's own list changed), 2026-07-28 clients on their `subscriptions/listen` streams.
   * A user who cannot see a changed tool hears nothing of it. `afresh` reads the store (what
   * another process published); a change here has already cleared the cache.
   */
  private async announceWorkflowTools(afresh = false): Promise<void> {
    const sessionUsers = [...this.sessions.byUserId().values()].map((sessions) => [...sessions]);
    const listeners = this.listenBus.listeningUsers();
    if (sessionUsers.length === 0 && listeners.length === 0) return;
    try {
      // Roles change without changing the stamp: every look lists each user's tools again.
      if (afresh) await this.workflowTools.stamp();
    } catch (error) {
      return void this.logger.warn({ err: error }, 'checking the workflow tools failed');
    }
    await Promise.allSettled([
      ...sessionUsers.map(async (sessions) => {
        const listed = await this.backends.forPrincipal(sessions[0].principal).listWorkflowTools();
        for (const session of sessions) session.server.workflowToolsChanged(listed);
      }),
      ...listeners.map(async (principal) => {
        const before = this.listenedTools.get(principal.userId);
        const now = await this.listedTools(principal);
        this.listenedTools.set(principal.userId, now);
        if (before !== undefined && before !== now) this.listenBus.publishTo(principal.userId, { kind: 'tools_list_changed' });
      }),
    ]);
    for (const userId of this.listenedTools.keys())
      if (!listeners.some((principal) => principal.userId === userId)) this.listenedTools.delete(userId);
  }

  private async listedTools(principal: Principal): Promise<string> {
    return (await this.backends.forPrincipal(principal).listWorkflowTools()).map(workflowToolFingerprint).join('\n');
  }

  /** A user opened a listen stream: what their list is now, to tell them when it changes. */
  private async rememberListenedTools(principal: Principal): Promise<void> {
    if (this.listenedTools.has(principal.userId)) return;
    try {
      this.listenedTools.set(principal.userId, await this.listedTools(principal));
    } catch (error) {
      this.logger.warn({ err: error }, 'listing the workflow tools of a listening MCP client failed');
    }
  }

  private registerRoutes(scope: FastifyInstance): void {
    const route = (method: HTTPMethods, url: string, handle: RawHandler) =>
      scope.route({
        method,
        url,
        exposeHeadRoute: false,
        onRequest: [
          ...(this.hostRule ? [this.hostRule] : []),
          (request, reply, done) => {
            reply.hijack();
            this.serve(handle, request, reply.raw);
            done();
          },
        ],
        // Never reached: the onRequest hook above has answered.
        handler: () => undefined,
      });
    route('POST', MCP_PATH, (request, response) => this.post(request, response));
    route('GET', MCP_PATH, (request, response) => this.streamableSessionRequest(request, response));
    route('DELETE', MCP_PATH, (request, response) => this.streamableSessionRequest(request, response));
    route('GET', SSE_PATH, (request, response) => this.sseOpen(request, response));
    route('POST', SSE_MESSAGES_PATH, (request, response) => this.sseMessage(request, response));
    for (const url of [MCP_PATH, SSE_PATH, SSE_MESSAGES_PATH])
      route('OPTIONS', url, (request, response) => this.preflight(request, response));
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

  /** POST /mcp: a 2026-07-28 request, or a message of a 2025 session (or the `initialize` opening one). */
  private async post(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const caller = await this.admit(request, response);
    const body = await readJsonBody(request.raw, this.bodyLimit);
    if (body === undefined) throw new RpcHttpError(400, RPC_PARSE_ERROR, 'Parse error: the request has no JSON-RPC body');
    const raw = request.raw as Caller;
    raw.auth = authInfoOf(caller);
    // A plain call of a collection tool is told apart by what the SDK's classification reads (the
    // envelope claim, the version headers), without paying for the whole ladder on every call.
    const call = toolCallOf(body);
    if (call && acceptsBoth(request)) {
      if (call.params._meta === undefined && this.legacyVersion(request)) {
        if (await this.sessionToolCall(request, response, call, caller)) return;
      } else if (plainEnvelope(call.params._meta) && this.plainModernHeaders(request, call)) {
        const answer = await this.collectionToolCall('modern', call, caller);
        if (answer) return writeJson(response, 200, answer);
      }
    }
    const outcome = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: header(request, 'mcp-protocol-version'),
      mcpMethodHeader: header(request, 'mcp-method'),
      mcpNameHeader: header(request, 'mcp-name'),
      body,
    });
    if (outcome.kind === 'legacy') return this.sessionPost(request, response, body, caller);
    // Everything else of the 2026-07-28 era, and its refusals, are the SDK's to answer.
    await this.listenBus.as(caller.principal, () => this.modernNode(raw, response, body));
  }

  /** The standard headers of a plain 2026-07-28 tools/call, as they must be for the SDK to serve it without a word. */
  private plainModernHeaders(request: FastifyRequest, call: ToolCall): boolean {
    return (
      header(request, 'mcp-protocol-version') === MODERN_REVISION &&
      header(request, 'mcp-method') === 'tools/call' &&
      header(request, 'mcp-name') === call.params.name
    );
  }

  /** No version header (2025-03-26 clients), or one a 2025 session takes without a word (anything else goes to the SDK). */
  private legacyVersion(request: FastifyRequest): boolean {
    const version = header(request, 'mcp-protocol-version');
    return version === undefined || version === '2025-11-25' || version === '2025-06-18' || version === '2025-03-26';
  }

  /** The JSON of the answer to a plain call of a collection tool (see answerCollectionToolCall); undefined for any other tool. */
  private collectionToolCall(era: McpEra, call: ToolCall, caller: McpCaller): Promise<string | undefined> {
    const { id, params } = call;
    return answerCollectionToolCall(
      era,
      id,
      params.name,
      params.arguments ?? {},
      this.backends.forPrincipal(caller.principal),
      this.serverOptions,
    );
  }

  /**
   * A plain 2025 call of a collection tool in the caller's session, answered as the session's
   * server would; false for a workflow tool, which the session's server serves.
   * @throws RpcHttpError for a missing or unknown session, as the session's transport answers
   */
  private async sessionToolCall(request: FastifyRequest, response: ServerResponse, call: ToolCall, caller: McpCaller): Promise<boolean> {
    const session = this.streamableSession(request, caller.principal);
    const answer = await this.collectionToolCall('legacy', call, caller);
    if (answer === undefined) return false;
    writeJson(response, 200, answer, session.id);
    return true;
  }

  /** A message of a 2025 session, or the `initialize` that opens one. */
  private async sessionPost(request: FastifyRequest, response: ServerResponse, body: unknown, caller: McpCaller): Promise<void> {
    const raw = request.raw as Caller;
    // A stale Mcp-Session-Id on an initialize is a client recovering from an expired session: it gets a new one.
    if (isInitialize(body)) return this.openStreamableSession(caller, raw, response, body);
    await this.streamableSession(request, caller.principal).transport.handleRequest(raw, response, body);
  }

  /** GET opens the session's stream of server-initiated messages; DELETE ends the session. */
  private async streamableSessionRequest(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const caller = await this.admit(request, response);
    const session = this.streamableSession(request, caller.principal);
    if (request.method === 'GET') this.sessions.holdOpen(session, response);
    (request.raw as Caller).auth = authInfoOf(caller);
    await session.transport.handleRequest(request.raw as Caller, response);
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
  private async openStreamableSession(caller: McpCaller, raw: Caller, response: ServerResponse, body: unknown): Promise<void> {
    const { principal } = caller;
    const server = await this.newSessionServer(caller);
    let session: StreamableSession | undefined;
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: newSessionId,
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
    server.server.onclose = () => session && this.sessions.remove(session.id);
    await server.server.connect(transport);
    await transport.handleRequest(raw, response, body);
    if (!server.server.getClientVersion()) await (session ? this.sessions.close(session) : server.server.close());
  }

  private async sseOpen(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const caller = await this.admit(request, response);
    const { principal } = caller;
    const server = await this.newSessionServer(caller);
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
    server.server.onclose = () => this.sessions.remove(session.id);
    try {
      await server.server.connect(transport);
    } catch (error) {
      request.log.error({ err: error }, 'MCP SSE stream failed to start');
      await this.sessions.close(session);
      response.destroy();
    }
  }

  private async sseMessage(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const caller = await this.admit(request, response);
    const sessionId = (request.query as { sessionId?: unknown }).sessionId;
    if (typeof sessionId !== 'string')
      throw new RpcHttpError(400, RPC_SERVER_ERROR, 'Bad Request: the sessionId query parameter is required');
    const body = await readJsonBody(request.raw, this.bodyLimit);
    if (body === undefined) throw new RpcHttpError(400, RPC_PARSE_ERROR, 'Parse error: the request has no JSON-RPC body');
    const session = this.sessions.find(sessionId, caller.principal.userId, 'sse');
    if (!session) throw sessionNotFound();
    usedBy(session, caller.principal);
    // The SDK's transport answers on the raw response; the handlers find the caller on the request.
    (request.raw as Caller).auth = authInfoOf(caller);
    await session.transport.handlePostMessage(request.raw, response, body);
  }

  private async preflight(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const origin = header(request, 'origin');
    if (!this.origins.allows(origin)) throw forbiddenOrigin(origin);
    this.origins.applyCors(origin, response, true);
    response.writeHead(204).end();
  }

  /** Origin first (a browser on a foreign page learns nothing more), then the caller's credential. */
  private async admit(request: FastifyRequest, response: ServerResponse): Promise<McpCaller> {
    const origin = header(request, 'origin');
    if (!this.origins.allows(origin)) throw forbiddenOrigin(origin);
    this.origins.applyCors(origin, response);
    return this.auth.authenticate(request, response);
  }

  /** A server instance of `era`, sharing this door's options with every other. */
  private newServer(era: McpEra): ServiceMcpServer {
    return createMcpServer(this.serverOptions, era);
  }

  /** A 2025 session's server, knowing the caller's workflow tools before its client can list them. */
  private async newSessionServer(caller: McpCaller): Promise<ServiceMcpServer> {
    const server = this.newServer('legacy');
    try {
      server.workflowToolsChanged(await this.backends.forPrincipal(caller.principal).listWorkflowTools());
    } catch (error) {
      this.logger.warn({ err: error }, 'listing the workflow tools of a new MCP session failed');
    }
    return server;
  }
}

/** Shape only (the transport validates the message): the SDK's guards are zod parses that build errors when they fail. */
const isInitializeMessage = (message: unknown): boolean => isRecord(message) && message.method === 'initialize' && message.id !== undefined;
const isInitialize = (body: unknown): boolean => (Array.isArray(body) ? body.some(isInitializeMessage) : isInitializeMessage(body));

const keysOf = (principal: Principal): Set<string> => new Set(principal.keyId ? [principal.keyId] : []);

function usedBy(session: McpSession, principal: Principal): void {
  session.principal = principal;
  if (principal.keyId) session.keyIds.add(principal.keyId);
}

/** Unknown, expired, closed and other users' sessions all answer the same (MCP spec: 404). */
const sessionNotFound = () =>
  new RpcHttpError(404, RPC_SESSION_NOT_FOUND, 'Session not found: start a new session with an initialize request');

const forbiddenOrigin = (origin: string | undefined) =>
  new RpcHttpError(403, RPC_SERVER_ERROR, `Forbidden: Origin ${origin} is not allowed (MCP_ALLOWED_ORIGINS)`);
