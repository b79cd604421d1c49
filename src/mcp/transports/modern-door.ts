import { NodeMcpRequestHandler, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpHttpHandler } from '@modelcontextprotocol/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { Principal } from '../../auth/principal';
import { ServicesBackendFactory } from '../in-process/services-backend.adapter';
import { ServiceMcpServer } from '../mcp-server.factory';
import { workflowToolFingerprint } from '../tools/tool-listing';
import { UserScopedEventBus } from './listen-bus';
import { CredentialHolder } from './revocation-watch';

export interface ModernDoorOptions {
  bodyLimit: number;
  backends: ServicesBackendFactory;
  /** A fresh 2026-07-28 server instance for one request. */
  newServer: () => ServiceMcpServer;
  logger: Logger;
}

/**
 * The door of the 2026-07-28 clients: the SDK's `createMcpHandler`, a fresh server instance per
 * request, no session. `subscriptions/listen` streams hear `list_changed` per user: what each
 * listening user last heard their workflow tools were is kept here, and only a change of their own
 * list reaches their streams. Its callers are admitted by McpHttpEndpoints before they reach it.
 */
export class ModernDoor implements CredentialHolder {
  private readonly listenBus: UserScopedEventBus;
  /** Each open response (a listen stream, a request being answered) with the credential it came with: a revoked one ends it. */
  private readonly open = new Map<ServerResponse, string>();
  private readonly handler: McpHttpHandler;
  private readonly node: NodeMcpRequestHandler;
  /** What each user with an open listen stream last heard their workflow tools were. */
  private readonly listenedTools = new Map<string, string>();

  constructor(private readonly options: ModernDoorOptions) {
    this.listenBus = new UserScopedEventBus((principal) => void this.rememberListenedTools(principal));
    this.handler = createMcpHandler(() => options.newServer().server, {
      // 2025 clients are served by the sessions (SessionDoor); this handler serves the 2026-07-28 requests only.
      legacy: 'reject',
      bus: this.listenBus,
      maxRequestBodySize: options.bodyLimit,
      onerror: (error) => options.logger.debug({ err: error }, 'MCP request refused'),
    });
    this.node = toNodeHandler(this.handler, { maxRequestBodySize: options.bodyLimit });
  }

  /** Serves one request (its body already read) for `principal`; a listen stream it opens is theirs. */
  serve(principal: Principal, raw: IncomingMessage, response: ServerResponse, body: unknown): Promise<void> {
    const { keyId } = principal;
    if (keyId) {
      this.open.set(response, keyId);
      response.once('close', () => this.open.delete(response));
    }
    return this.listenBus.as(principal, () => this.node(raw, response, body));
  }

  keyIds(): Set<string> {
    return new Set(this.open.values());
  }

  /** Ends the streams (and answers in progress) of a revoked credential: the client sees its connection end. */
  closeUsingKey(keyId: string): void {
    for (const [response, usedKey] of this.open) if (usedKey === keyId) response.destroy();
  }

  get listening(): boolean {
    return this.listenBus.listeningUsers().length > 0;
  }

  /** Tells each listening user whose list of workflow tools changed since they last heard. */
  async announceWorkflowTools(): Promise<void> {
    const listeners = this.listenBus.listeningUsers();
    await Promise.allSettled(
      listeners.map(async (principal) => {
        const before = this.listenedTools.get(principal.userId);
        const now = await this.listedTools(principal);
        this.listenedTools.set(principal.userId, now);
        if (before !== undefined && before !== now) this.listenBus.publishTo(principal.userId, { kind: 'tools_list_changed' });
      }),
    );
    for (const userId of this.listenedTools.keys())
      if (!listeners.some((principal) => principal.userId === userId)) this.listenedTools.delete(userId);
  }

  close(): Promise<void> {
    return this.handler.close();
  }

  private async listedTools(principal: Principal): Promise<string> {
    return (await this.options.backends.forPrincipal(principal).listWorkflowTools()).map(workflowToolFingerprint).join('\n');
  }

  /** A user opened a listen stream: what their list is now, to tell them when it changes. */
  private async rememberListenedTools(principal: Principal): Promise<void> {
    if (this.listenedTools.has(principal.userId)) return;
    try {
      this.listenedTools.set(principal.userId, await this.listedTools(principal));
    } catch (error) {
      this.options.logger.warn({ err: error }, 'listing the workflow tools of a listening MCP client failed');
    }
  }
}
