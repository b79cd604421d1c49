import { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CallToolRequestSchema,
  CallToolResult,
  ErrorCode as RpcErrorCode,
  JSONRPCMessage,
  McpError,
  RequestId,
  ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, isAppError } from '../common/app-error';
import { LruCache } from '../common/lru-cache';
import { linearJsonSchemaValidator } from '../sdk/json-schema';
import type { CollectionsBackend, WorkflowToolRecord } from './collections-backend.port';
import { toolFailure } from './tool-errors';
import { COLLECTION_TOOLS, CollectionTool } from './tools';
import { sdkInputSchema, ToolInputJsonSchema } from './tools/sdk-input-schema';

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

/** What `registerTool` is given for one tool, built once per process and shared by every session. */
interface ToolConfig {
  title: string;
  description: string;
  /** Zod, as `registerTool` takes them (see sdkInputSchema). */
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations: ToolAnnotations;
}
type ToolHandler = (args: Record<string, unknown>, context: ToolCallContext) => Promise<CallToolResult>;

const COLLECTION_TOOL_CONFIGS = new Map<string, { tool: CollectionTool; config: ToolConfig }>(
  COLLECTION_TOOLS.map((tool) => [
    tool.name,
    {
      tool,
      config: {
        title: tool.title,
        description: tool.description,
        inputSchema: sdkInputSchema(tool.input.schema),
        // The SDK renders zod output schemas itself (draft-07, output side of transforms).
        outputSchema: tool.output,
        annotations: { title: tool.title, ...tool.annotations },
      },
    },
  ]),
);

// A Server builds its own Ajv instance unless given one: the largest part of a session's memory,
// for elicitation schemas this server never sends. The service's one JSON Schema check (linear-time
// patterns) serves every session.
const SCHEMA_VALIDATOR = linearJsonSchemaValidator;

/** A workflow tool runs a workflow: it may do anything the workflow does, so it claims no safety. */
const WORKFLOW_TOOL_HINTS: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

const fingerprint = (tool: WorkflowToolRecord): string => JSON.stringify([tool.workflowId, tool.title, tool.description, tool.inputSchema]);

/** Registrations of the same workflow tool in many sessions share one config (and its schema). */
const WORKFLOW_TOOL_CONFIGS = new LruCache<string, ToolConfig>(256);

function workflowToolConfig(tool: WorkflowToolRecord, key: string): ToolConfig {
  let config = WORKFLOW_TOOL_CONFIGS.get(key);
  if (!config) {
    config = {
      title: tool.title,
      description: tool.description,
      inputSchema: sdkInputSchema(tool.inputSchema as ToolInputJsonSchema),
      annotations: { title: tool.title, ...WORKFLOW_TOOL_HINTS },
    };
    WORKFLOW_TOOL_CONFIGS.set(key, config);
  }
  return config;
}

/**
 * One session's MCP server: the SDK's McpServer with the eight collection tools and the workflows
 * its caller may call as tools, registered with `registerTool`. Connect it to exactly one transport.
 *
 * Each tool checks its own arguments (the REST API's DTOs, or the workflow's JSON Schema through
 * ajv) and answers a refusal, like any failure of the operation, with an `isError` result naming
 * what to correct: MCP 2025-11-25, server/tools "Error Handling", lists input validation errors
 * among Tool Execution Errors. The same section makes an unknown tool a protocol error (-32602),
 * where McpServer's own tools/call handler (SDK 1.32) answers it with `isError` too; so tools/call
 * is ours, and it only finds the registered tool and calls its handler.
 */
export class ServiceMcpServer {
  readonly mcp: McpServer;
  /** Every registered tool by name: the collection tools and the caller's workflow tools. */
  private readonly tools = new Map<string, RegisteredTool>();
  private readonly workflowTools = new Map<string, { key: string; registered: RegisteredTool }>();

  constructor(private readonly options: McpServerOptions) {
    this.mcp = new McpServer(SERVER_INFO, {
      capabilities: { tools: { listChanged: true } },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: SCHEMA_VALIDATOR,
      // Several workflow tools registered or removed at once are one notification.
      debouncedNotificationMethods: ['notifications/tools/list_changed'],
    });
    for (const { tool, config } of COLLECTION_TOOL_CONFIGS.values()) {
      const run: ToolHandler = (args, context) => runCollectionTool(tool, args, context, options);
      this.tools.set(tool.name, this.mcp.registerTool(tool.name, config as never, run as never));
    }
    this.mcp.server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      this.callTool(request.params.name, request.params.arguments ?? {}, extra),
    );
  }

  /**
   * Registers the caller's workflow tools as the backend lists them now. A store that cannot list
   * them leaves the registrations as they were (the collection tools stay usable).
   */
  async syncWorkflowTools(context: ToolCallContext): Promise<void> {
    let listed: WorkflowToolRecord[];
    try {
      listed = await this.options.backend(context).listWorkflowTools();
    } catch (error) {
      if (!isAppError(error) || error.code === ErrorCode.INTERNAL) this.options.onUnexpectedError?.(error, 'tools/list');
      return;
    }
    this.setWorkflowTools(listed);
  }

  /**
   * Makes `listed` the registered workflow tools. McpServer sends `notifications/tools/list_changed`
   * when that adds, removes or changes one, and only then.
   */
  setWorkflowTools(listed: readonly WorkflowToolRecord[]): void {
    const wanted = new Map(
      listed.filter((tool) => !COLLECTION_TOOL_CONFIGS.has(tool.name)).map((tool) => [tool.name, { tool, key: fingerprint(tool) }]),
    );
    for (const [name, current] of this.workflowTools) {
      if (wanted.get(name)?.key === current.key) {
        wanted.delete(name);
        continue;
      }
      current.registered.remove();
      this.workflowTools.delete(name);
      this.tools.delete(name);
    }
    for (const [name, { tool, key }] of wanted) {
      const call: ToolHandler = (args, context) => callWorkflowTool(name, args, context, this.options);
      const registered = this.mcp.registerTool(name, workflowToolConfig(tool, key) as never, call as never);
      this.workflowTools.set(name, { key, registered });
      this.tools.set(name, registered);
    }
  }

  /**
   * The JSON-RPC response to one tools/call, by the same handler the SDK's Protocol calls, for the
   * remote transport's fast path (see McpHttpEndpoints): what the Protocol would send, less its
   * schema checks of a request already checked for shape and of a result built here.
   */
  async answerToolCall(id: RequestId, name: string, args: Record<string, unknown>, context: ToolCallContext): Promise<JSONRPCMessage> {
    try {
      return { jsonrpc: '2.0', id, result: await this.callTool(name, args, context) };
    } catch (error) {
      if (error instanceof McpError)
        return {
          jsonrpc: '2.0',
          id,
          error: { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) },
        };
      // The tools answer their failures as results: this is a bug, and says nothing internal.
      this.options.onUnexpectedError?.(error, name);
      return { jsonrpc: '2.0', id, error: { code: RpcErrorCode.InternalError, message: 'Internal error' } };
    }
  }

  private async callTool(name: string, args: Record<string, unknown>, context: ToolCallContext): Promise<CallToolResult> {
    // A workflow tool published since this session last looked (through another process) is callable at once.
    if (!this.tools.has(name)) await this.syncWorkflowTools(context);
    const tool = this.tools.get(name);
    if (!tool?.enabled) throw unknownTool(name);
    return (tool.handler as unknown as ToolHandler)(args, context);
  }
}

const unknownTool = (name: string) =>
  new McpError(RpcErrorCode.InvalidParams, `Unknown tool ${name}: tools/list names the tools of this server`);

/** One collection tool call: arguments checked by the REST API's own DTOs, then the shared service. */
async function runCollectionTool(
  tool: CollectionTool,
  args: Record<string, unknown>,
  context: ToolCallContext,
  options: McpServerOptions,
): Promise<CallToolResult> {
  let output: Record<string, unknown>;
  try {
    // The REST API's own input DTOs: the same bad input gets the same refusal at both doors.
    const parsed = tool.input.parse(args);
    // Parsing projects the result onto the declared fields, so structuredContent always matches outputSchema.
    output = tool.output.parse(await tool.run(options.backend(context), parsed));
  } catch (error) {
    if (!isAppError(error) || error.code === ErrorCode.INTERNAL) options.onUnexpectedError?.(error, tool.name);
    return toolFailure(error);
  }
  return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
}

/**
 * A workflow tool: the run's record (id, status, output, error), an isError result when it failed
 * or is still running (its record is at /api/v1/runs/<runId>).
 */
async function callWorkflowTool(
  name: string,
  args: Record<string, unknown>,
  context: ToolCallContext,
  options: McpServerOptions,
): Promise<CallToolResult> {
  let call;
  try {
    call = await options.backend(context).callWorkflowTool(name, args);
  } catch (error) {
    // Removed, or no longer shared with the caller, since this session registered it.
    if (isAppError(error) && error.code === ErrorCode.NOT_FOUND) throw unknownTool(name);
    if (!isAppError(error) || error.code === ErrorCode.INTERNAL) options.onUnexpectedError?.(error, name);
    return toolFailure(error);
  }
  // One value, twice: the text block is the JSON of structuredContent, so a client that reads only
  // the text learns what one that reads the structure does (the failure's error, a run still going).
  const result = { runId: call.runId, status: call.status, output: call.output ?? null, error: call.error ?? null };
  const answer: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  return call.status === 'succeeded' ? answer : { ...answer, isError: true };
}

/** One MCP server speaking the eight collection tools and the caller's workflow tools. */
export const createMcpServer = (options: McpServerOptions) => new ServiceMcpServer(options);
