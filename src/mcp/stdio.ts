#!/usr/bin/env node
/**
 * `service-mcp`: the MCP server over STDIO for clients that start a local program (Claude Desktop,
 * Cursor): the same tools, resources, prompts and tasks as the remote server, both protocol eras
 * (the SDK's `serveStdio` pins each connection to the era its client opens with). It calls the
 * service's REST API with SERVICE_API_KEY, so it imports nothing of Nest or the app: only the MCP
 * layer and the REST backend.
 *
 * stdout carries the protocol and nothing else; diagnostics go to stderr.
 */
import { createRequestStateCodec } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { randomBytes } from 'node:crypto';
import { createMcpServer, McpServerOptions, ServiceMcpServer } from './mcp-server.factory';
import { loadStdioConfig, StdioConfig, StdioConfigError } from '../config/stdio-config';
import { RestCollectionsBackend } from './rest/rest-backend.adapter';
import type { FollowState } from './workflow-calls';

/** Workflows published as tools, or removed, are announced within this. */
const TOOLS_WATCH_MS = 15_000;
/** As the service's default MCP_TOOL_TIMEOUT_MS: below the 60 s after which clients give up on a request. */
const TOOL_TIMEOUT_MS = 50_000;

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
  const options: McpServerOptions = {
    backend: () => backend,
    onUnexpectedError: (error, where) =>
      process.stderr.write(`service-mcp: ${where} failed: ${error instanceof Error ? error.stack : String(error)}\n`),
    // One connection, one process: its key need not outlive it.
    requestState: createRequestStateCodec<FollowState>({ key: randomBytes(32), ttlSeconds: 24 * 60 * 60 }),
    toolTimeoutMs: TOOL_TIMEOUT_MS,
  };
  let server: ServiceMcpServer | undefined;
  const handle = serveStdio(
    ({ era }) => {
      server = createMcpServer(options, era);
      void watchTools(server, backend);
      return server.server;
    },
    { onerror: (error) => process.stderr.write(`service-mcp: ${error.message}\n`) },
  );
  const watch = setInterval(() => void (server && watchTools(server, backend)), TOOLS_WATCH_MS);
  watch.unref();
  // The client ends the connection by closing our stdin.
  process.stdin.once('end', () => {
    clearInterval(watch);
    void handle.close();
  });
}

/** The connection's server hears of the workflow tools as they are now (it tells its client when they changed). */
async function watchTools(server: ServiceMcpServer, backend: RestCollectionsBackend): Promise<void> {
  try {
    server.workflowToolsChanged(await backend.listWorkflowTools());
  } catch {
    // The service is unreachable for now: the next look tries again, and the tools answer why.
  }
}

main().catch((error) => {
  fail(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
});
