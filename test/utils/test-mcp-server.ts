import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

/**
 * An outside MCP server on 127.0.0.1 for tests (Streamable HTTP, stateless: a server and transport
 * per request, as the SDK shows). Tools: `add` ({a, b} -> structured {sum}), `echo` ({text} -> the
 * text), `fail` (an isError result), `whoami` (the Authorization header it received, as text);
 * with `patternTool`, also `spell` ({word} matching the catastrophic pattern `^(a+)+$`).
 * It records every request's headers, and refuses requests without `token` when one is set.
 */
export class TestMcpServer {
  readonly requests: { method: string; headers: IncomingHttpHeaders }[] = [];
  readonly calls: { name: string; args: unknown }[] = [];
  private readonly server = createServer((req, res) => {
    this.requests.push({ method: req.method ?? '', headers: req.headers });
    if (this.token && req.headers.authorization !== `Bearer ${this.token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const mcp = this.build(req.headers);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: this.json });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    mcp
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });

  private constructor(
    private readonly token: string | undefined,
    private readonly json: boolean,
    private readonly patternTool: boolean,
  ) {}

  static async start(options: { token?: string; json?: boolean; patternTool?: boolean } = {}): Promise<TestMcpServer> {
    const server = new TestMcpServer(options.token, options.json ?? false, options.patternTool ?? false);
    await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private build(headers: IncomingHttpHeaders): McpServer {
    const mcp = new McpServer({ name: 'test-outside-server', version: '1.0.0' });
    // The SDK's zod generics are too deep for the compiler here; the shapes are checked at run time.
    const register = mcp.registerTool.bind(mcp) as (name: string, config: object, handler: (args: any) => Promise<object>) => void;
    register(
      'add',
      { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
      async ({ a, b }: { a: number; b: number }) => {
        this.calls.push({ name: 'add', args: { a, b } });
        return { content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } };
      },
    );
    register('echo', { description: 'Says the text back', inputSchema: { text: z.string() } }, async ({ text }: { text: string }) => {
      this.calls.push({ name: 'echo', args: { text } });
      return { content: [{ type: 'text', text }] };
    });
    register('fail', { description: 'Always fails', inputSchema: { why: z.string().optional() } }, async ({ why }: { why?: string }) => {
      this.calls.push({ name: 'fail', args: { why } });
      return { content: [{ type: 'text', text: `failed on purpose: ${why ?? 'no reason'}` }], isError: true };
    });
    register('whoami', { description: 'Tells the Authorization header it got', inputSchema: {} }, async () => {
      this.calls.push({ name: 'whoami', args: {} });
      return { content: [{ type: 'text', text: `authorization: ${headers.authorization ?? 'none'}` }] };
    });
    if (this.patternTool) {
      register('spell', { description: 'Spells a word of a', inputSchema: { word: z.string().regex(/^(a+)+$/) } }, async ({ word }) => {
        this.calls.push({ name: 'spell', args: { word } });
        return { content: [{ type: 'text', text: word }] };
      });
    }
    return mcp;
  }
}
