import type { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { SSEServerTransport } from '@modelcontextprotocol/server-legacy/sse';
import type { ServerResponse } from 'node:http';
import type { Principal } from '../../auth/principal';
import type { ServiceMcpServer } from '../mcp-server.factory';

interface SessionBase {
  readonly id: string;
  /** The user who opened the session: the only one who may use it. */
  readonly userId: string;
  /** Whom the session's last request authenticated as: what its workflow tools are listed for. */
  principal: Principal;
  /** Every API key the session was used with: the session ends when any of them is revoked. */
  readonly keyIds: Set<string>;
  readonly server: ServiceMcpServer;
  lastActive: number;
  /** Long-lived responses open on the session (GET streams); while one is open the client is connected. */
  openStreams: number;
}

export interface StreamableSession extends SessionBase {
  readonly kind: 'streamable-http';
  readonly transport: NodeStreamableHTTPServerTransport;
}

export interface SseSession extends SessionBase {
  readonly kind: 'sse';
  readonly transport: SSEServerTransport;
  readonly stream: ServerResponse;
}

export type McpSession = StreamableSession | SseSession;
type SessionOfKind<K extends McpSession['kind']> = Extract<McpSession, { kind: K }>;

/** Also the keep-alive period of the event streams. */
const MAX_SWEEP_MS = 15_000;

export interface SessionLimits {
  /** A session with no request and no open stream for this long ends. */
  idleMs: number;
  /** Beyond this many sessions of one user, the one least recently active ends. */
  maxPerUser: number;
}

/**
 * The live MCP sessions of this process, bound to the user who opened them. A session ends when
 * its client closes it, when it has seen no request and held no open stream for `idleMs`, when its
 * user opens one too many, or at shutdown. Memory per session is one SDK Server and its transport
 * (a few KB), so the per-user cap is what bounds it against a client that never says goodbye.
 */
export class McpSessionRegistry {
  private readonly sessions = new Map<string, McpSession>();
  private readonly byUser = new Map<string, Set<McpSession>>();
  private readonly idleMs: number;
  private readonly maxPerUser: number;
  private sweeper?: NodeJS.Timeout;
  private closed = false;

  constructor(
    limits: SessionLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.idleMs = limits.idleMs;
    this.maxPerUser = limits.maxPerUser;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Every live session, e.g. to tell each one that the list of tools changed. */
  all(): McpSession[] {
    return [...this.sessions.values()];
  }

  /** The live sessions of each user. */
  byUserId(): ReadonlyMap<string, ReadonlySet<McpSession>> {
    return this.byUser;
  }

  /** Starts expiring idle sessions and pinging legacy SSE streams; without it, expiry happens on lookup only. */
  startSweeping(): void {
    this.sweeper ??= setInterval(() => this.sweep(), Math.max(250, Math.min(MAX_SWEEP_MS, this.idleMs / 2)));
    this.sweeper.unref();
  }

  add(session: McpSession): void {
    // A session opened while shutting down would hold the HTTP server open: end it at once.
    if (this.closed) return void session.server.server.close().catch(() => undefined);
    this.sessions.set(session.id, session);
    let own = this.byUser.get(session.userId);
    if (!own) this.byUser.set(session.userId, (own = new Set()));
    own.add(session);
    if (own.size > this.maxPerUser) void this.close(leastRecentlyActive(own, session));
  }

  /**
   * The caller's live session: undefined when the id is unknown, expired, of the other transport
   * or another user's. Those cases look alike on purpose, so an id reveals nothing to a stranger.
   */
  find<K extends McpSession['kind']>(id: string, userId: string, kind: K): SessionOfKind<K> | undefined {
    const session = this.sessions.get(id);
    if (!session || session.userId !== userId || session.kind !== kind) return undefined;
    const now = this.now();
    if (this.isIdle(session, now)) {
      void this.close(session);
      return undefined;
    }
    session.lastActive = now;
    return session as SessionOfKind<K>;
  }

  /** The API keys the live sessions were used with. */
  keyIds(): Set<string> {
    const ids = new Set<string>();
    for (const session of this.sessions.values()) for (const id of session.keyIds) ids.add(id);
    return ids;
  }

  /** Ends every session used with the key (revoked, or its user gone), and with it its open streams. */
  async closeUsingKey(keyId: string): Promise<void> {
    await Promise.all([...this.sessions.values()].filter((session) => session.keyIds.has(keyId)).map((session) => this.close(session)));
  }

  /** Counts `response` as an open stream of the session until it closes. */
  holdOpen(session: McpSession, response: ServerResponse): void {
    session.openStreams++;
    response.once('close', () => {
      session.openStreams--;
      session.lastActive = this.now();
    });
  }

  /** Forgets a session whose server has closed (by DELETE, a dropped SSE stream, or us). */
  remove(id: string): void {
    const session = this.sessions.get(id);
    if (session) this.forget(session);
  }

  async close(session: McpSession): Promise<void> {
    this.forget(session);
    await session.server.server.close().catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.all([...this.sessions.values()].map((session) => this.close(session)));
  }

  private forget(session: McpSession): void {
    if (this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    const own = this.byUser.get(session.userId)!;
    own.delete(session);
    if (own.size === 0) this.byUser.delete(session.userId);
  }

  private isIdle(session: McpSession, now: number): boolean {
    return session.openStreams === 0 && now - session.lastActive > this.idleMs;
  }

  private sweep(): void {
    const now = this.now();
    for (const session of this.sessions.values()) {
      if (this.isIdle(session, now)) void this.close(session);
      // The Streamable HTTP transport keeps its own streams alive.
      else if (session.kind === 'sse') keepAlive(session.stream);
    }
  }
}

/** The session to end for `newcomer`: the least recently active, preferring one with no open stream (no client attached). */
function leastRecentlyActive(sessions: Iterable<McpSession>, newcomer: McpSession): McpSession {
  let pick: McpSession | undefined;
  for (const session of sessions) {
    if (session !== newcomer && (!pick || endsBefore(session, pick))) pick = session;
  }
  return pick!;
}

const endsBefore = (a: McpSession, b: McpSession): boolean =>
  (a.openStreams === 0) !== (b.openStreams === 0) ? a.openStreams === 0 : a.lastActive < b.lastActive;

/** A comment line keeps proxies from timing an idle stream out and turns a dead peer into a write error. */
function keepAlive(stream: ServerResponse): void {
  if (stream.writable) stream.write(': keepalive\n\n');
}
