import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import {
  CallToolRequestSchema,
  CallToolResult,
  ErrorCode as RpcErrorCode,
  JSONRPCMessage,
  JSONRPCRequest,
  ListToolsRequestSchema,
  ListToolsResult,
  McpError,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { AnyZodObject } from 'zod';
import { AppError, ErrorCode, FieldError, isAppError } from '../common/app-error';
import type { CollectionsBackend, WorkflowToolRecord } from './collections-backend.port';
import { toolFailure } from './tool-errors';
import { COLLECTION_TOOLS, CollectionTool } from './tools';

export const SERVER_INFO = { name: 'workflow-collection-service', version: '0.1.0' } as const;

const INSTRUCTIONS =
  'Document collections with semantic search. Find a collection with service_list_collections (or make one with ' +
  'service_create_collection), add documents by URL with service_add_file_to_collection, wait until service_list_collection_files ' +
  'shows them as indexed, then ask questions with service_search_collection.';

/** What a tool call knows about its request; the remote transports put the caller in `authInfo`. */
export interface ToolCallContext {
  authInfo?: AuthInfo;
}

export interface McpServerOptions {
  /** The backend acting for the caller of this request. */
  backend(context: ToolCallContext): CollectionsBackend;
  /** Failures that are bugs rather than AppErrors, for the log; the model only sees "internal". */
  onUnexpectedError?(error: unknown, tool: string): void;
}

const JSON_SCHEMA_DIALECT = 'http://json-schema.org/draft-07/schema#';

// The SDK's own zod-to-JSON-Schema conversion for the output schemas, so tools/list says what
// McpServer would say. Its parameter type spans zod 3 and 4; checking our zod 3 objects against it
// is too deep for tsc.
const outputSchema = (schema: AnyZodObject) =>
  toJsonSchemaCompat(schema as unknown as Parameters<typeof toJsonSchemaCompat>[0], { strictUnions: true, pipeStrategy: 'output' });

function describeTool(tool: CollectionTool): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: { ...tool.input.schema, $schema: JSON_SCHEMA_DIALECT } as Tool['inputSchema'],
    outputSchema: outputSchema(tool.output) as Tool['outputSchema'],
    annotations: { title: tool.title, ...tool.annotations },
  };
}

// Built once per process and shared by every session: a session costs a Server, not eight schemas.
const TOOL_LIST: ListToolsResult = { tools: COLLECTION_TOOLS.map(describeTool) };
const TOOLS_BY_NAME = new Map(COLLECTION_TOOLS.map((tool) => [tool.name, tool]));
// A Server builds its own Ajv instance unless given one: the largest part of a session's memory,
// for elicitation schemas this server never sends. One per process serves every session.
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

/** Arguments a tool refused, as JSON-RPC InvalidParams naming each bad one (`data.issues`). */
function invalidArguments(tool: string, error: AppError): McpError {
  const fields = (error.details as { fields?: FieldError[] } | undefined)?.fields ?? [];
  const issues = fields.map((f) => ({ path: f.field, message: f.reason }));
  return new McpError(RpcErrorCode.InvalidParams, `Invalid arguments for ${tool}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
}

/** A workflow tool runs a workflow: it may do anything the workflow does, so it claims no safety. */
const WORKFLOW_TOOL_HINTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

function describeWorkflowTool(tool: WorkflowToolRecord): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema as Tool['inputSchema'],
    annotations: { title: tool.title, ...WORKFLOW_TOOL_HINTS },
  };
}

/**
 * The eight collection tools, then the workflows the caller may call as tools. A store that cannot
 * list the workflows leaves the collection tools usable.
 */
export async function listTools(context: ToolCallContext, options: McpServerOptions): Promise<ListToolsResult> {
  let workflows: WorkflowToolRecord[];
  try {
    workflows = await options.backend(context).listWorkflowTools();
  } catch (error) {
    options.onUnexpectedError?.(error, 'tools/list');
    return TOOL_LIST;
  }
  return workflows.length ? { tools: [...TOOL_LIST.tools, ...workflows.map(describeWorkflowTool)] } : TOOL_LIST;
}

/** A workflow tool: the run's answer, or an isError the model can read when it failed or is still running. */
async function callWorkflowTool(name: string, args: Record<string, unknown>, context: ToolCallContext, options: McpServerOptions): Promise<CallToolResult> {
  let call;
  try {
    call = await options.backend(context).callWorkflowTool(name, args);
  } catch (error) {
    if (isAppError(error) && error.code === ErrorCode.NOT_FOUND) {
      throw new McpError(RpcErrorCode.InvalidParams, `Unknown tool ${name}: tools/list names the tools of this server`);
    }
    if (isAppError(error) && error.code === ErrorCode.VALIDATION_FAILED) throw invalidArguments(name, error);
    if (!isAppError(error) || error.code === ErrorCode.INTERNAL) options.onUnexpectedError?.(error, name);
    return toolFailure(error);
  }
  const result = { runId: call.runId, status: call.status, output: call.output ?? null };
  if (call.status === 'succeeded') return { content: [{ type: 'text', text: JSON.stringify(call.output ?? null) }], structuredContent: result };
  const why =
    call.status === 'running'
      ? `Run ${call.runId} of ${name} is still running; its record is at /api/v1/runs/${call.runId}.`
      : `Run ${call.runId} of ${name} ${call.status}${call.error ? `: ${call.error.code}: ${call.error.message}` : ''}.`;
  return { content: [{ type: 'text', text: why }], structuredContent: result, isError: true };
}

/**
 * Runs one tool call. Malformed arguments are a protocol fault (JSON-RPC InvalidParams, as
 * INTERFACE.md and the issue require); a failure of the operation itself is an `isError` result the
 * model can read and act on. McpServer turns both into `isError`, hence our own handler.
 */
export async function callTool(
  params: { name: string; arguments?: Record<string, unknown> },
  context: ToolCallContext,
  options: McpServerOptions,
): Promise<CallToolResult> {
  const tool = TOOLS_BY_NAME.get(params.name);
  if (!tool) return callWorkflowTool(params.name, params.arguments ?? {}, context, options);
  let args: unknown;
  try {
    // The REST API's own input DTOs: the same bad input gets the same refusal at both doors.
    args = tool.input.parse(params.arguments ?? {});
  } catch (error) {
    if (isAppError(error) && error.code === ErrorCode.VALIDATION_FAILED) throw invalidArguments(tool.name, error);
    throw error;
  }
  let output: Record<string, unknown>;
  try {
    // Parsing projects the result onto the declared fields, so structuredContent always matches outputSchema.
    output = tool.output.parse(await tool.run(options.backend(context), args));
  } catch (error) {
    if (!isAppError(error) || error.code === ErrorCode.INTERNAL) options.onUnexpectedError?.(error, tool.name);
    return toolFailure(error);
  }
  return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
}

/** One MCP server speaking the eight collection tools and the caller's workflow tools; connect it to exactly one transport. */
export function createMcpServer(options: McpServerOptions): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS, jsonSchemaValidator: SCHEMA_VALIDATOR });
  server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => listTools(extra, options));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(request.params, extra, options));
  return server;
}

/** Answers one request, or returns undefined to leave it to the SDK Server. Never rejects. */
export type ToolRequestShortcut = (request: JSONRPCRequest, context: ToolCallContext) => Promise<JSONRPCMessage> | undefined;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * tools/list and tools/call answered straight from the definitions, for the remote transport's
 * hot path. Through the SDK's Protocol a tool call measured ~350 us of server CPU, against ~150 us
 * directly (its per-message type guards are zod parses that fail and build errors): a fifth of
 * the REST door's rate against nearly half (test/bench/mcp.bench.ts). Same definitions, same
 * `callTool`, same JSON-RPC error shape; everything else (initialize, ping, cancellation, any
 * request carrying `_meta` or `task`) still goes through the SDK Server, as every call does over
 * stdio.
 */
export function toolRequestShortcut(options: McpServerOptions): ToolRequestShortcut {
  return (request, context) => {
    const params = request.params ?? {};
    if (params._meta !== undefined || params.task !== undefined) return undefined;
    if (request.method === 'tools/list') return listTools(context, options).then((result) => ({ jsonrpc: '2.0' as const, id: request.id, result }));
    if (request.method !== 'tools/call') return undefined;
    return respond(request, () => {
      if (typeof params.name !== 'string' || (params.arguments !== undefined && !isRecord(params.arguments))) {
        throw new McpError(RpcErrorCode.InvalidParams, 'Invalid tools/call request: params needs a name and, optionally, an arguments object');
      }
      return callTool({ name: params.name, arguments: params.arguments }, context, options);
    });
  };
}

/** The response the SDK's Protocol would send for this handler's outcome. */
async function respond(request: JSONRPCRequest, handle: () => Promise<CallToolResult>): Promise<JSONRPCMessage> {
  try {
    return { jsonrpc: '2.0', id: request.id, result: await handle() };
  } catch (error) {
    const { code, message, data } = error as { code?: unknown; message?: string; data?: unknown };
    return {
      jsonrpc: '2.0',
      id: request.id,
      error: {
        code: Number.isSafeInteger(code) ? (code as number) : RpcErrorCode.InternalError,
        message: message ?? 'Internal error',
        ...(data !== undefined ? { data } : {}),
      },
    };
  }
}
