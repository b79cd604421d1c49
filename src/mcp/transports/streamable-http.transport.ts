import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage, type JSONRPCRequest, type MessageExtraInfo, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ServerResponse } from 'node:http';
import type { ToolRequestShortcut } from '../mcp-server.factory';
import { RPC_SESSION_NOT_FOUND } from './json-rpc-http';

type Message = JSONRPCMessage & { id?: RequestId; method?: unknown; result?: unknown; error?: unknown };

const isId = (value: unknown): value is RequestId => typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A request (method and id), a notification (method, no id) or a response (id and result or error). */
function isMessage(value: unknown): value is Message {
  if (!isObject(value) || value.jsonrpc !== '2.0') return false;
  if (typeof value.method === 'string') return (value.id === undefined || isId(value.id)) && (value.params === undefined || isObject(value.params));
  return isId(value.id) && (isObject(value.result) || isObject(value.error));
}

export const isRequest = (message: Message): boolean => typeof message.method === 'string' && message.id !== undefined;
export const isInitialize = (message: Message): boolean => message.method === 'initialize' && message.id !== undefined;
const isResponse = (message: Message): boolean => message.method === undefined;

/** Most messages one POST may batch (2025-03-26 allowed batches; later revisions send one message). */
const MAX_BATCH = 100;

/**
 * The JSON-RPC messages of a POST body: one message or a batch whose request ids are distinct.
 * Shape only: the SDK's Protocol validates each method's params against its schema.
 */
export function jsonRpcMessages(body: unknown): Message[] | undefined {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0 || messages.length > MAX_BATCH || !messages.every(isMessage)) return undefined;
  const ids = messages.filter(isRequest).map((message) => message.id);
  return new Set(ids).size === ids.length ? messages : undefined;
}

const failed = (id: RequestId, code: number, message: string): JSONRPCMessage => ({ jsonrpc: '2.0', id, error: { code, message } });
const sessionClosed = (id: RequestId) => failed(id, RPC_SESSION_NOT_FOUND, 'Session closed');
const cancelled = (id: RequestId) => failed(id, ErrorCode.ConnectionClosed, 'Request cancelled by the client');

const cancelledRequestId = (message: Message): RequestId | undefined => {
  if (message.method !== 'notifications/cancelled' || message.id !== undefined) return undefined;
  const requestId = (message as { params?: { requestId?: unknown } }).params?.requestId;
  return isId(requestId) ? requestId : undefined;
};

/**
 * One Streamable HTTP session as an SDK Transport, answering every POST with a single JSON body
 * (the specification lets a server choose JSON over an SSE stream per request) and carrying
 * server-initiated messages on the session's GET stream.
 *
 * The SDK's StreamableHTTPServerTransport does the same through a Node-to-Fetch bridge: a Request,
 * a Response and a ReadableStream per call, and failing zod parses per message. This speaks to
 * Node directly, which measured 1.4 times the tool calls/s on the load of test/bench/mcp.bench.ts.
 * HTTP concerns (authentication, session lookup, status codes) stay in McpHttpEndpoints.
 */
export class StreamableHttpTransport implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  /** Responses awaited by an open POST, by request id. */
  private readonly awaiting = new Map<RequestId, (response: JSONRPCMessage) => void>();
  private events?: ServerResponse;
  private closed = false;

  /** `shortcut` answers the requests it knows without the SDK Server; the rest go to `onmessage`. */
  constructor(
    readonly sessionId: string,
    private readonly shortcut?: ToolRequestShortcut,
  ) {}

  /** The open GET stream, if any. */
  get stream(): ServerResponse | undefined {
    return this.events;
  }

  async start(): Promise<void> {}

  /**
   * Hands the messages of one POST to the server and resolves with the responses to its requests,
   * in request order; with no request among them, resolves at once with none.
   */
  exchange(messages: readonly Message[], extra: MessageExtraInfo): Promise<JSONRPCMessage[]> {
    const ids = messages.filter(isRequest).map((message) => message.id as RequestId);
    // A closed server would never answer: the POST would wait forever.
    if (this.closed) return Promise.resolve(ids.map(sessionClosed));
    const answered = new Map<RequestId, JSONRPCMessage>();
    const done = new Promise<JSONRPCMessage[]>((resolve) => {
      for (const id of ids) {
        this.awaiting.set(id, (response) => {
          answered.set(id, response);
          if (answered.size === ids.length) resolve(ids.map((i) => answered.get(i)!));
        });
      }
    });
    for (const message of messages) {
      const cancelledId = cancelledRequestId(message);
      if (cancelledId !== undefined) this.cancel(cancelledId);
      const answer = isRequest(message) ? this.shortcut?.(message as JSONRPCRequest, extra) : undefined;
      if (answer) void answer.then((response) => this.send(response));
      else this.onmessage?.(message, extra);
    }
    return ids.length ? done : Promise.resolve([]);
  }

  /**
   * A cancelled request's POST is answered at once with an error the client, which gave up on it,
   * ignores. The SDK Server (also told, to abort its handler) never answers a cancelled request,
   * which would otherwise leave that POST open for good; a later answer from anyone is dropped.
   */
  private cancel(id: RequestId): void {
    this.answer(id, cancelled(id));
  }

  /** Hands `response` to the POST awaiting `id`, if one still is. */
  private answer(id: RequestId, response: JSONRPCMessage): void {
    const deliver = this.awaiting.get(id);
    this.awaiting.delete(id);
    deliver?.(response);
  }

  /** True when `id` is already awaited: a client must not reuse a request id in flight. */
  isAwaiting(id: RequestId): boolean {
    return this.awaiting.has(id);
  }

  /** Makes `response` the session's stream for server-initiated messages; false if one is open. */
  attachStream(response: ServerResponse): boolean {
    if (this.events || this.closed) return false;
    this.events = response;
    response.once('close', () => {
      if (this.events === response) this.events = undefined;
    });
    return true;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const m = message as Message;
    if (isResponse(m)) return this.answer(m.id as RequestId, message);
    // Requests and notifications from the server ride the GET stream; without one they have nowhere to go.
    this.events?.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.events?.end();
    this.events = undefined;
    for (const [id, deliver] of this.awaiting) deliver(sessionClosed(id));
    this.awaiting.clear();
    this.onclose?.();
  }
}
