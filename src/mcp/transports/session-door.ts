import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { AuthInfo, isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResponse } from '@modelcontextprotocol/server';
import { SSEServerTransport } from '@modelcontextprotocol/server-legacy/sse';
import type { FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { Principal } from '../../auth/principal';
import { ServicesBackendFactory } from '../in-process/services-backend.adapter';
import { ServiceMcpServer } from '../mcp-server.factory';
import {
  header,
  isRecord,
  readJsonBody,
  RPC_INVALID_REQUEST,
  RPC_PARSE_ERROR,
  RPC_SERVER_ERROR,
  RPC_SESSION_NOT_FOUND,
  RpcHttpError,
} from './json-rpc-http';
import { authInfoOf, McpCaller } from './mcp-auth';
import { CredentialHolder } from './revocation-watch';
import { McpSession, McpSessionRegistry, SessionLimits, SseSession, StreamableSession } from './mcp-sessions';

type Caller = IncomingMessage & { auth?: AuthInfo };

/** What a POST to the SSE transport's message endpoint carries. */
const ONE_MESSAGE =
  'a POST carries one JSON-RPC 2.0 message: an object with "jsonrpc": "2.0" and a "method" (a request also has an "id", ' +
  'a string or a number), or a response to the server, an "id" with a "result" or an "error"';

/** 256 bits from the CSPRNG, in the visible ASCII the specification asks for. */
const newSessionId = () => randomBytes(32).toString('base64url');

export interface SessionDoorOptions {
  limits: SessionLimits;
  bodyLimit: number;
  backends: ServicesBackendFactory;
  /** A fresh 2025-era server instance for one session. */
  newServer: () => ServiceMcpServer;
  logger: Logger;
}

/**
 * The door of the 2025 clients: sessions on the SDK's Streamable HTTP transport (`initialize`, then
 * `Mcp-Session-Id` on /mcp) and on its frozen HTTP+SSE transport (/sse and /messages), one server
 * instance per session. Each session is bound to the user who opened it, capped per user, expired
 * when idle and ended with any key it was used with (McpSessionRegistry). Its callers are admitted
 * by McpHttpEndpoints before they reach it.
 */
export class SessionDoor implements CredentialHolder {
  private readonly sessions: McpSessionRegistry;

  constructor(private readonly options: SessionDoorOptions) {
    this.sessions = new McpSessionRegistry(options.limits);
  }

  /** Live sessions of this process. */
  get size(): number {
    return this.sessions.size;
  }

  start(): void {
    this.sessions.startSweeping();
  }

  async close(): Promise<void> {
    await this.sessions.closeAll();
  }

  /** The credentials the live sessions were used with. */
  keyIds(): Set<string> {
    return this.sessions.keyIds();
  }

  /** Ends every session used with the credential, and with it its open streams. */
  closeUsingKey(keyId: string): Promise<void> {
    return this.sessions.closeUsingKey(keyId);
  }

  /**
   * Tells each user's sessions their list of workflow tools, listed once per user; a session's
   * server sends `notifications/tools/list_changed` only when its own list changed.
   */
  async announceWorkflowTools(): Promise<void> {
    const users = [...this.sessions.byUserId().values()].map((sessions) => [...sessions]);
    await Promise.allSettled(
      users.map(async (sessions) => {
        const listed = await this.options.backends.forPrincipal(sessions[0].principal).listWorkflowTools();
        for (const session of sessions) session.server.workflowToolsChanged(listed);
      }),
    );
  }

  /** A POSTed message of a 2025 session, or the `initialize` that opens one. */
  async post(request: FastifyRequest, response: ServerResponse, body: unknown, caller: McpCaller): Promise<void> {
    const raw = request.raw as Caller;
    // A stale Mcp-Session-Id on an initialize is a client recovering from an expired session: it gets a new one.
    if (isInitialize(body)) return this.openStreamableSession(caller, raw, response, body);
    await this.streamableSession(request, caller.principal).transport.handleRequest(raw, response, body);
  }

  /** GET opens the session's stream of server-initiated messages; DELETE ends the session. */
  async getOrDelete(request: FastifyRequest, response: ServerResponse, caller: McpCaller): Promise<void> {
    const session = this.streamableSession(request, caller.principal);
    if (request.method === 'GET') this.sessions.holdOpen(session, response);
    (request.raw as Caller).auth = authInfoOf(caller);
    await session.transport.handleRequest(request.raw as Caller, response);
  }

  /**
   * The caller's Streamable HTTP session named by Mcp-Session-Id, counted as active.
   * @throws RpcHttpError the refusal the session's transport would answer (no header, unknown session)
   */
  streamableSession(request: FastifyRequest, principal: Principal): StreamableSession {
    const sessionId = header(request, 'mcp-session-id');
    if (sessionId === undefined)
      throw new RpcHttpError(400, RPC_SERVER_ERROR, 'Bad Request: no Mcp-Session-Id header; start with an initialize request');
    const session = this.sessions.find(sessionId, principal.userId, 'streamable-http');
    if (!session) throw sessionNotFound();
    usedBy(session, principal);
    return session;
  }

  /** GET /sse: a legacy HTTP+SSE session, its stream open for as long as the client holds it. */
  async sseOpen(request: FastifyRequest, response: ServerResponse, caller: McpCaller, messagesPath: string): Promise<void> {
    const { principal } = caller;
    const server = await this.newSessionServer(caller);
    const transport = new SSEServerTransport(messagesPath, response);
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

  /** POST /messages?sessionId=…: a message of a legacy HTTP+SSE session. */
  async sseMessage(request: FastifyRequest, response: ServerResponse, caller: McpCaller): Promise<void> {
    const sessionId = (request.query as { sessionId?: unknown }).sessionId;
    if (typeof sessionId !== 'string')
      throw new RpcHttpError(400, RPC_SERVER_ERROR, 'Bad Request: the sessionId query parameter is required');
    const body = await readJsonBody(request.raw, this.options.bodyLimit);
    if (body === undefined) throw new RpcHttpError(400, RPC_PARSE_ERROR, 'Parse error: the request has no JSON-RPC body');
    // The SDK's SSE transport reads the stream again for a null body, and answers other misfits in plain text naming nothing.
    if (!isJSONRPCRequest(body) && !isJSONRPCNotification(body) && !isJSONRPCResponse(body))
      throw new RpcHttpError(400, RPC_INVALID_REQUEST, `Invalid Request: ${ONE_MESSAGE}`);
    const session = this.sessions.find(sessionId, caller.principal.userId, 'sse');
    if (!session) throw sessionNotFound();
    usedBy(session, caller.principal);
    // The SDK's transport answers on the raw response; the handlers find the caller on the request.
    (request.raw as Caller).auth = authInfoOf(caller);
    await session.transport.handlePostMessage(request.raw, response, body);
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

  /** A session's server, knowing the caller's workflow tools before its client can list them. */
  private async newSessionServer(caller: McpCaller): Promise<ServiceMcpServer> {
    const server = this.options.newServer();
    try {
      server.workflowToolsChanged(await this.options.backends.forPrincipal(caller.principal).listWorkflowTools());
    } catch (error) {
      this.options.logger.warn({ err: error }, 'listing the workflow tools of a new MCP session failed');
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
