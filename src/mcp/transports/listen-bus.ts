import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from '../../auth/principal';

/**
 * The change events of 2026-07-28 `subscriptions/listen` streams, per user. The SDK's listen router
 * subscribes each stream to the bus while serving its request; the stream's caller is taken from
 * the request's context (`as`), so an event about one user's tools reaches that user's streams
 * only: a list changed by a workflow someone else can see tells nobody else anything.
 */
export class UserScopedEventBus implements ServerEventBus {
  private readonly listeners = new Map<(event: ServerEvent) => void, Principal | undefined>();
  private readonly caller = new AsyncLocalStorage<Principal>();

  constructor(private readonly onSubscribe?: (principal: Principal) => void) {}

  /** Runs `serve` (one request) so that a stream it opens belongs to `principal`. */
  as<T>(principal: Principal, serve: () => T): T {
    return this.caller.run(principal, serve);
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    const principal = this.caller.getStore();
    this.listeners.set(listener, principal);
    if (principal) this.onSubscribe?.(principal);
    return () => void this.listeners.delete(listener);
  }

  /** To every stream (a change that concerns everyone). */
  publish(event: ServerEvent): void {
    for (const listener of this.listeners.keys()) deliver(listener, event);
  }

  /** To the streams of one user. */
  publishTo(userId: string, event: ServerEvent): void {
    for (const [listener, principal] of this.listeners) if (principal?.userId === userId) deliver(listener, event);
  }

  /** The users with an open stream, each once, as the last of their streams authenticated. */
  listeningUsers(): Principal[] {
    const users = new Map<string, Principal>();
    for (const principal of this.listeners.values()) if (principal) users.set(principal.userId, principal);
    return [...users.values()];
  }
}

function deliver(listener: (event: ServerEvent) => void, event: ServerEvent): void {
  try {
    listener(event);
  } catch {
    // A stream that fails to write is torn down by its router; the others still hear.
  }
}
