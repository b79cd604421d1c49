#!/usr/bin/env node
/**
 * `service-mcp`: the eight collection tools over STDIO for MCP clients that start a local program
 * (Claude Desktop, Cursor). It calls the service's REST API with SERVICE_API_KEY, so it imports
 * nothing of Nest or the app: only the tool definitions and the REST backend.
 *
 * stdout carries the protocol and nothing else; diagnostics go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from './mcp-server.factory';
import { RestCollectionsBackend } from './rest-backend.adapter';

const DEFAULT_SERVICE_URL = 'http://127.0.0.1:3000';

const fail = (message: string): void => {
  process.stderr.write(`service-mcp: ${message}\n`);
  process.exitCode = 1;
};

async function main(): Promise<void> {
  // This program is a client of the service, not the service: AppConfig is not its configuration,
  // so it reads its own two variables here.
  // Clients that keep the remote header in a variable may hand over "Bearer <key>": accept both.
  const apiKey = process.env.SERVICE_API_KEY?.trim().replace(/^Bearer\s+/i, '');
  if (!apiKey) {
    return fail(
      'SERVICE_API_KEY is not set. Set it to an API key of the service (see "Connect an MCP client" in the README), ' +
        'e.g. in the "env" block of your MCP client configuration.',
    );
  }
  const serviceUrl = process.env.SERVICE_URL?.trim() || DEFAULT_SERVICE_URL;
  if (!/^https?:\/\/[^/]/i.test(serviceUrl) || !URL.canParse(serviceUrl)) {
    return fail(`SERVICE_URL must be an http(s) URL such as ${DEFAULT_SERVICE_URL}; got "${serviceUrl}".`);
  }

  const backend = new RestCollectionsBackend(serviceUrl, apiKey);
  const server = createMcpServer({
    backend: () => backend,
    onUnexpectedError: (error, tool) => process.stderr.write(`service-mcp: ${tool} failed: ${error instanceof Error ? error.stack : String(error)}\n`),
  });
  const transport = new StdioServerTransport();
  // The client ends the session by closing our stdin.
  process.stdin.once('end', () => void server.close());
  await server.connect(transport);
}

main().catch((error) => {
  fail(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
});
