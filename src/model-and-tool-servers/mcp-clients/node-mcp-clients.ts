import {
  isNodeError,
  linearJsonSchemaValidator,
  McpClients,
  McpServerRef,
  McpSession,
  McpToolInfo,
  McpToolResult,
  NodeConfigurationError,
  NodeHttpClient,
  NodeUpstreamError,
} from '../../sdk';

/** What the service calls itself to the servers it connects to. */
const CLIENT_INFO = { name: 'workflow-collection-service', version: '1' };
/** Pages of tools/list read at most: a server listing more is cut here. */
const MAX_TOOL_PAGES = 20;
type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

type ClientSdk = [
  typeof import('@modelcontextprotocol/sdk/client/index.js'),
  typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
];
let clientSdk: Promise<ClientSdk> | undefined;

/**
 * The MCP SDK's client (with zod, about 6.5 MiB of heap) is loaded by the first connection: a
 * process none of whose nodes connects to an MCP server never loads it.
 */
function loadClientSdk(): Promise<ClientSdk> {
  return (clientSdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]));
}

/**
 * `ctx.mcp`: the MCP SDK's client over Streamable HTTP, every request of which goes through the
 * node's guarded HTTP client (`ctx.http`), so the outbound guard, the size and time caps, the
 * run's signal and the credential injection apply as to any other request a node makes.
 *
 * The optional GET stream a client may open for server-initiated messages is answered with 405
 * here: a node asks and reads answers, it has nothing to do with a server's own notifications, and
 * a buffered client could not hold that stream open.
 */
export function nodeMcpClients(http: NodeHttpClient): McpClients {
  return {
    async connect(server: McpServerRef, signal: AbortSignal): Promise<McpSession> {
      let url: URL;
      try {
        url = new URL(server.url);
      } catch {
        throw new NodeConfigurationError(`MCP server URL ${JSON.stringify(server.url)} is not a URL`, { details: { parameter: 'url' } });
      }
      const [{ Client }, { StreamableHTTPClientTransport }] = await loadClientSdk();
      const transport = new StreamableHTTPClientTransport(url, { fetch: guardedFetch(http, server.credential, signal) });
      // The server's tool schemas are checked with the service's own JSON Schema check: their
      // patterns run in linear time, whatever the server sends.
      const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: linearJsonSchemaValidator });
      try {
        await client.connect(transport, { signal });
      } catch (error) {
        await client.close().catch(() => undefined);
        throw asNodeError(error, `Connecting to the MCP server at ${url.origin} failed`, signal);
      }
      return {
        async listTools(): Promise<McpToolInfo[]> {
          const tools: McpToolInfo[] = [];
          let cursor: string | undefined;
          for (let page = 0; page < MAX_TOOL_PAGES; page++) {
            const listed = await scoped(signal, (callSignal) =>
              client.listTools(cursor ? { cursor } : undefined, { signal: callSignal }),
            ).catch((error: unknown) => {
              throw asNodeError(error, `Listing the tools of the MCP server at ${url.origin} failed`, signal);
            });
            for (const tool of listed.tools) {
              tools.push({
                name: tool.name,
                ...(tool.description ? { description: tool.description } : {}),
                inputSchema: tool.inputSchema as Record<string, unknown>,
              });
            }
            cursor = listed.nextCursor;
            if (!cursor) break;
          }
          return tools;
        },
        async callTool(name: string, args: Record<string, unknown>): Promise<McpToolResult> {
          const answer = await scoped(signal, (callSignal) =>
            client.callTool({ name, arguments: args }, undefined, { signal: callSignal }),
          ).catch((error: unknown) => {
            throw asNodeError(error, `Calling tool ${name} of the MCP server at ${url.origin} failed`, signal);
          });
          const content = Array.isArray(answer.content) ? (answer.content as McpToolResult['content']) : [];
          const structured = answer.structuredContent as Record<string, unknown> | undefined;
          const text = content
            .filter((block) => block.type === 'text' && typeof block.text === 'string')
            .map((block) => block.text)
            .join('\n');
          return {
            content,
            text,
            ...(structured !== undefined ? { structuredContent: structured } : {}),
            isError: answer.isError === true,
          };
        },
        close: () => client.close().catch(() => undefined),
      };
    },
  };
}

/** The fetch the SDK's transport calls, as requests of the node's guarded client. */
function guardedFetch(http: NodeHttpClient, credential: string | undefined, signal: AbortSignal): FetchLike {
  return async (input, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    // No stream of server-initiated messages (see nodeMcpClients); 405 is what a server without one answers.
    if (method === 'GET') return new Response(null, { status: 405 });
    if (method !== 'POST' && method !== 'DELETE') return new Response(null, { status: 405 });
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const body = typeof init.body === 'string' ? init.body : init.body == null ? undefined : String(init.body);
    const answer = await http.fetch(String(input), {
      method,
      headers,
      body,
      credential,
      signal: init.signal ? AbortSignal.any([signal, init.signal]) : signal,
      followRedirects: !(init.redirect === 'manual' || init.redirect === 'error'),
    });
    const bodiless = [101, 204, 205, 304].includes(answer.status) || method === 'DELETE';
    return new Response(bodiless ? null : new Uint8Array(answer.body), {
      status: Math.min(599, Math.max(200, answer.status)),
      headers: answer.headers,
    });
  };
}

/**
 * Runs `call` with a signal of its own that follows `signal` until the call ends: the SDK may leave
 * its listener on the signal it is given, and one node makes many calls under the same signal.
 */
async function scoped<T>(signal: AbortSignal, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const follow = () => controller.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  try {
    return await call(controller.signal);
  } finally {
    signal.removeEventListener('abort', follow);
  }
}

/** Node errors (a refused URL, a timeout, a credential) pass as they are; the SDK's own failures are upstream ones. */
function asNodeError(error: unknown, prefix: string, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (isNodeError(error)) return error;
  const cause = (error as { cause?: unknown })?.cause;
  if (isNodeError(cause)) return cause;
  const message = error instanceof Error ? error.message : String(error);
  return new NodeUpstreamError(`${prefix}: ${message}`, { cause: error, retryable: true });
}
