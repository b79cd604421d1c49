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
import { loadStdioConfig, StdioConfig, StdioConfigError } from '../config/stdio-config';
import { RestCollectionsBackend } from './rest/rest-backend.adapter';

const fail = (message: string): void => {
  process.stderr.write(`service-mcp: ${message}\n`);
  process.exitCode = 1;
};

async function main(): Promise<void> {
  let config: StdioConfig;
  try {
    config = loadStdioConfig();
  } catch (error) {
    if (error instanceof StdioConfigError) return fail(error.message);
    throw error;
  }
  const backend = new RestCollectionsBackend(config.serviceUrl, config.apiKey);
  const server = createMcpServer({
    backend: () => backend,
    onUnexpectedError: (error, tool) =>
      process.stderr.write(`service-mcp: ${tool} failed: ${error instanceof Error ? error.stack : String(error)}\n`),
  });
  // The workflow tools are registered before the client can list them.
  await server.syncWorkflowTools({});
  const transport = new StdioServerTransport();
  // The client ends the session by closing our stdin.
  process.stdin.once('end', () => void server.mcp.close());
  await server.mcp.connect(transport);
  // Workflows published as tools, or removed, are announced (by McpServer, as their registrations change) within this.
  const watch = setInterval(() => void server.syncWorkflowTools({}), TOOLS_WATCH_MS);
  watch.unref();
  process.stdin.once('end', () => clearInterval(watch));
}

const TOOLS_WATCH_MS = 15_000;

main().catch((error) => {
  fail(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
});
