import { BeforeApplicationShutdown, Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  AuthInfo,
  classifyInboundRequest,
  ClientCapabilities,
  createRequestStateCodec,
  localhostAllowedHostnames,
  RequestId,
} from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../../common/logger';
import { SecretCipher } from '../../common/secret-cipher';
import { rawRoute } from '../../common/raw-route';
import { AppConfig } from '../../config/app-config';
import { WorkflowToolEvents, WorkflowToolsService } from '../../workflows/workflow-tools.service';
import { ServicesBackendFactory } from '../in-process/services-backend.adapter';
import { McpEra } from '../mcp-call';
import {
  answerCollectionToolCall,
  answerWorkflowToolCall,
  createMcpServer,
  McpServerOptions,
  plainWorkflowClient,
} from '../mcp-server.factory';
import { FollowState } from '../workflow-calls';
import {
  header,
  isRecord,
  readJsonBody,
  RPC_INTERNAL_ERROR,
  RPC_PARSE_ERROR,
  RPC_SERVER_ERROR,
  RpcHttpError,
  writeJson,
  writeRpcError,
} from './json-rpc-http';
import { ProtectedPath } from '../../oauth/oauth-server';
import { missingScopeOf, ScopeSet } from '../../oauth/oauth-scopes';
import { collectionTool } from '../tools/tool-listing';
import { authInfoOf, callerOf, McpAuthentication, McpCaller } from './mcp-auth';
import { ModernDoor } from './modern-door';
import { RevocationWatch } from './revocation-watch';
import { HostRule, OriginPolicy } from './origin-policy';
import { SessionDoor } from './session-door';

export const MCP_PATH = '/mcp';
export const SSE_PATH = '/sse';
export const SSE_MESSAGES_PATH = '/messages';

type Caller = IncomingMessage & { auth?: AuthInfo };
/** An MCP route: it answers on the raw Node response (see McpHttpEndpoints). */
type RawHandler = (request: FastifyRequest, response: ServerResponse) => Promise<void>;

/** Workflow tools published in another API process, or newly shared with a user, are announced within this. */
const TOOLS_WATCH_MS = 10_000;

/** A workflow call's state between rounds (an approval asked, a form to fill) lasts a day. */
const REQUEST_STATE_TTL_SECONDS = 24 * 60 * 60;
const MODERN_REVISION = '2026-07-28';

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
 * `toolCallOf`): it answers what the SDK would, from the same code, at the cost of a REST call. So
 * does a plain call of a workflow tool from a client that can be asked nothing (no elicitation) and
 * takes no tasks: no progress token, nothing to ask, so one JSON answer once the run ended.
 *
 * What the SDK leaves to its host is here or in the two doors (SessionDoor, ModernDoor):
 * authentication on every request (McpAuthentication, the caller reaching the handlers as
 * `authInfo`), the Origin policy, the Host rule on a loopback listener (against DNS rebinding), the
 * JSON body (size limit, poisoned keys, depth), and the 2025 sessions: bound to the user who opened
 * them, capped per user, expired when idle, ended with the key they were used with.
 */
@Injectable()
export class McpHttpEndpoints implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly origins: OriginPolicy;
  private readonly bodyLimit: number;
  private readonly hostRule?: HostRule;
  readonly serverOptions: McpServerOptions;
  private readonly sessions: SessionDoor;
  private readonly modern: ModernDoor;
  private readonly revocations: RevocationWatch;
  private toolsWatch?: NodeJS.Timeout;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly auth: McpAuthentication,
    private readonly backends: ServicesBackendFactory,
    private readonly workflowTools: WorkflowToolsService,
    private readonly toolEvents: WorkflowToolEvents,
    cipher: SecretCipher,
    config: AppConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'mcp' });
    this.bodyLimit = config.BODY_LIMIT_BYTES;
    this.origins = new OriginPolicy(config.MCP_ALLOWED_ORIGINS, config.HOST);
    if (this.origins.loopback) {
      // On a loopback listener a DNS-rebinding page shows its own host name: only this machine's, and the public URL's, pass.
      const publicHost = config.PUBLIC_URL ? new URL(config.PUBLIC_URL).hostname : undefined;
      this.hostRule = new HostRule([...localhostAllowedHostnames(), ...(publicHost ? [publicHost] : [])]);
    }
    this.serverOptions = {
      backend: (authInfo) => {
        const caller = callerOf(authInfo);
        return this.backends.forPrincipal(caller.principal, caller.scopes);
      },
      onUnexpectedError: (error, where) => this.logger.error({ err: error, where }, 'MCP request failed'),
      requestState: createRequestStateCodec<FollowState>({
        key: cipher.deriveKey('mcp-request-state'),
        ttlSeconds: REQUEST_STATE_TTL_SECONDS,
      }),
      toolTimeoutMs: config.MCP_TOOL_TIMEOUT_MS,
    };
    const shared = { bodyLimit: this.bodyLimit, backends, logger: this.logger };
    this.sessions = new SessionDoor({
      ...shared,
      limits: { idleMs: config.MCP_SESSION_IDLE_MS, maxPerUser: config.MCP_MAX_SESSIONS_PER_USER },
      newServer: () => createMcpServer(this.serverOptions, 'legacy'),
    });
    this.modern = new ModernDoor({ ...shared, newServer: () => createMcpServer(this.serverOptions, 'modern') });
    this.revocations = new RevocationWatch(auth, [this.sessions, this.modern], this.logger);
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
    this.sessions.start();
    this.revocations.start();
    this.unsubscribe.push(this.toolEvents.onChange(() => void this.announceWorkflowTools()));
    this.toolsWatch = setInterval(() => void this.announceWorkflowTools(true), TOOLS_WATCH_MS);
    this.toolsWatch.unref();
  }

  /** Before the HTTP server closes, which would otherwise wait forever on the open streams. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.toolsWatch);
    this.revocations.stop();
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    await Promise.all([this.sessions.close(), this.modern.close()]);
  }

  /**
   * Tells each connected user's clients when their list of workflow tools changed: 2025 sessions by
   * `notifications/tools/list_changed`, 2026-07-28 clients on their `subscriptions/listen` streams.
   * A user who cannot see a changed tool hears nothing of it. `afresh` reads the store (what
   * another process published); a change here has already cleared the cache.
   */
  private async announceWorkflowTools(afresh = false): Promise<void> {
    if (this.sessions.size === 0 && !this.modern.listening) return;
    try {
      // Roles change without changing the stamp: every look lists each user's tools again.
      if (afresh) await this.workflowTools.stamp();
    } catch (error) {
      return void this.logger.warn({ err: error }, 'checking the workflow tools failed');
    }
    await Promise.all([this.sessions.announceWorkflowTools(), this.modern.announceWorkflowTools()]);
  }

  private registerRoutes(scope: FastifyInstance): void {
    const route = (method: HTTPMethods, url: string, handle: RawHandler) =>
      rawRoute(scope, method, url, (request, response) => this.serve(handle, request, response));
    const admitted =
      (path: ProtectedPath, handle: (request: FastifyRequest, response: ServerResponse, caller: McpCaller) => Promise<void>): RawHandler =>
      async (request, response) =>
        handle(request, response, await this.admit(request, response, path));
    route(
      'POST',
      MCP_PATH,
      admitted(MCP_PATH, (request, response, caller) => this.post(request, response, caller)),
    );
    route(
      'GET',
      MCP_PATH,
      admitted(MCP_PATH, (request, response, caller) => this.sessions.getOrDelete(request, response, caller)),
    );
    route(
      'DELETE',
      MCP_PATH,
      admitted(MCP_PATH, (request, response, caller) => this.sessions.getOrDelete(request, response, caller)),
    );
    route(
      'GET',
      SSE_PATH,
      admitted(SSE_PATH, (request, response, caller) => this.sessions.sseOpen(request, response, caller, SSE_MESSAGES_PATH)),
    );
    route(
      'POST',
      SSE_MESSAGES_PATH,
      admitted(SSE_PATH, (request, response, caller) => this.sessions.sseMessage(request, response, caller)),
    );
    for (const url of [MCP_PATH, SSE_PATH, SSE_MESSAGES_PATH])
      route('OPTIONS', url, (request, response) => this.preflight(request, response));
  }

  /** Runs one route's handler; a refusal it throws is answered in JSON-RPC, anything else is a 500. */
  private serve(handle: RawHandler, request: FastifyRequest, response: ServerResponse): void {
    // The onSend hook that names the request everywhere else does not run on a hijacked reply.
    response.setHeader('x-request-id', String(request.id));
    const refusal = this.hostRule?.refusal(request.headers.host);
    const handled = refusal === undefined ? handle(request, response) : Promise.reject(new RpcHttpError(403, RPC_SERVER_ERROR, refusal));
    handled.catch((error: unknown) => {
      const refusal = error instanceof RpcHttpError;
      if (!refusal) request.log.error({ err: error }, 'MCP request failed');
      // Too late for a status: the client sees the connection end instead.
      if (response.headersSent) response.destroy();
      else writeRpcError(response, refusal ? error : new RpcHttpError(500, RPC_INTERNAL_ERROR, 'Internal error'));
    });
  }

  /** POST /mcp: a 2026-07-28 request, or a message of a 2025 session (or the `initialize` opening one). */
  private async post(request: FastifyRequest, response: ServerResponse, caller: McpCaller): Promise<void> {
    const body = await readJsonBody(request.raw, this.bodyLimit);
    if (body === undefined) throw new RpcHttpError(400, RPC_PARSE_ERROR, 'Parse error: the request has no JSON-RPC body');
    this.stepUp(body, caller, response);
    const raw = request.raw as Caller;
    raw.auth = authInfoOf(caller);
    // A plain call of a collection tool is told apart by what the SDK's classification reads (the
    // envelope claim, the version headers), without paying for the whole ladder on every call.
    const call = toolCallOf(body);
    if (call && acceptsBoth(request)) {
      if (call.params._meta === undefined && legacyVersion(request)) {
        // The caller's session first: a missing or unknown one is refused as its transport would.
        const session = this.sessions.streamableSession(request, caller.principal);
        const client = session.server.server.getClientCapabilities() ?? {};
        const answer = await this.plainToolCall('legacy', call, caller, client, response);
        if (answer) return writeJson(response, 200, answer, session.id);
      } else if (plainEnvelope(call.params._meta) && plainModernHeaders(request, call)) {
        // Absent capabilities are the SDK's to judge: the fast path takes only a client that declared its own.
        const client = call.params._meta!['io.modelcontextprotocol/clientCapabilities'] as ClientCapabilities | undefined;
        const answer = await this.plainToolCall('modern', call, caller, client, response);
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
    if (outcome.kind === 'legacy') return this.sessions.post(request, response, body, caller);
    // Everything else of the 2026-07-28 era, and its refusals, are the SDK's to answer.
    await this.modern.serve(caller.principal, raw, response, body);
  }

  /**
   * The JSON of the answer to a plain call of a collection tool (answerCollectionToolCall) or, from a
   * client that can be asked nothing and takes no tasks, of a workflow tool (answerWorkflowToolCall);
   * undefined for what the SDK serves.
   */
  private async plainToolCall(
    era: McpEra,
    call: ToolCall,
    caller: McpCaller,
    client: ClientCapabilities | undefined,
    response: ServerResponse,
  ): Promise<string | undefined> {
    const { id, params } = call;
    const backend = this.backends.forPrincipal(caller.principal, caller.scopes);
    const args = params.arguments ?? {};
    const answer = await answerCollectionToolCall(era, id, params.name, args, backend, this.serverOptions);
    if (answer !== undefined || !client || !plainWorkflowClient(client)) return answer;
    // The client going away stops the call's following of its run, as the SDK's request signal does.
    const gone = new AbortController();
    const onClose = () => gone.abort();
    response.once('close', onClose);
    try {
      return await answerWorkflowToolCall(era, id, params.name, args, { backend, client, signal: gone.signal }, this.serverOptions);
    } finally {
      response.off('close', onClose);
    }
  }

  private async preflight(request: FastifyRequest, response: ServerResponse): Promise<void> {
    const origin = header(request, 'origin');
    if (!this.origins.allows(origin)) throw forbiddenOrigin(origin);
    this.origins.applyCors(origin, response, true);
    response.writeHead(204).end();
  }

  /** Origin first (a browser on a foreign page learns nothing more), then the caller's credential. */
  private async admit(request: FastifyRequest, response: ServerResponse, path: ProtectedPath): Promise<McpCaller> {
    const origin = header(request, 'origin');
    if (!this.origins.allows(origin)) throw forbiddenOrigin(origin);
    this.origins.applyCors(origin, response);
    return this.auth.authenticate(request, response, path);
  }

  /**
   * Step-up where the transport can say it (MCP authorization, RFC 6750): a tools/call beyond the
   * token's scopes is answered `403` with `error="insufficient_scope"` and the scope to ask for,
   * before it runs. What only the call's arguments tell (a collection not chosen) is refused by
   * the scoped backend inside, as a tool error naming the scope.
   */
  private stepUp(body: unknown, caller: McpCaller, response: ServerResponse): void {
    if (!caller.scopes || !isRecord(body) || body.method !== 'tools/call' || !isRecord(body.params)) return;
    const name = body.params.name;
    if (typeof name !== 'string') return;
    const tool = collectionTool(name);
    const scopes = new ScopeSet(caller.scopes);
    let scope: string | undefined;
    try {
      if (!tool) scopes.requireWorkflow();
      else if (name === 'service_create_collection') scopes.requireNewCollection();
      else scopes.requireCollections(!tool.annotations.readOnlyHint);
    } catch (error) {
      scope = missingScopeOf(error);
      if (!scope) throw error;
      response.setHeader('www-authenticate', this.auth.challenge(MCP_PATH, `error="insufficient_scope", scope="${scope}"`));
      throw new RpcHttpError(403, RPC_SERVER_ERROR, `Forbidden: ${(error as Error).message}`, { code: 'INSUFFICIENT_SCOPE', scope });
    }
  }
}

/** The standard headers of a plain 2026-07-28 tools/call, as they must be for the SDK to serve it without a word. */
const plainModernHeaders = (request: FastifyRequest, call: ToolCall): boolean =>
  header(request, 'mcp-protocol-version') === MODERN_REVISION &&
  header(request, 'mcp-method') === 'tools/call' &&
  header(request, 'mcp-name') === call.params.name;

/** No version header (2025-03-26 clients), or one a 2025 session takes without a word (anything else goes to the SDK). */
const legacyVersion = (request: FastifyRequest): boolean => {
  const version = header(request, 'mcp-protocol-version');
  return version === undefined || version === '2025-11-25' || version === '2025-06-18' || version === '2025-03-26';
};

const forbiddenOrigin = (origin: string | undefined) =>
  new RpcHttpError(403, RPC_SERVER_ERROR, `Forbidden: Origin ${origin} is not allowed (MCP_ALLOWED_ORIGINS)`);
