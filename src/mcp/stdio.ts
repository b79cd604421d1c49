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
import { RestCollectionsBackend } from './rest-backend.adapter';

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
    onUnexpectedError: (error, tool) => process.stderr.write(`service-mcp: ${tool} failed: ${error instanceof Error ? error.stack : String(error)}\n`),
  });
  const transport = new StdioServerTransport();
  // The client ends the session by closing our stdin.
  process.stdin.once('end', () => void server.close());
  await server.connect(transport);
  watchWorkflowTools(backend, () => void server.notification({ method: 'notifications/tools/list_changed' }).catch(() => undefined));
}

/** Workflows published as tools, or removed, are announced to the client within this. */
const TOOLS_WATCH_MS = 15_000;

function watchWorkflowTools(backend: RestCollectionsBackend, announce: () => void): void {
  let last: string | undefined;
  const look = async () => {
    const names = JSON.stringify((await backend.listWorkflowTools()).map((tool) => [tool.name, tool.description, tool.inputSchema]));
    if (last !== undefined && names !== last) announce();
    last = names;
  };
  const timer = setInterval(() => void look().catch(() => undefined), TOOLS_WATCH_MS);
  timer.unref();
  process.stdin.once('end', () => clearInterval(timer));
  void look().catch(() => undefined);
}

main().catch((error) => {
  fail(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
});
