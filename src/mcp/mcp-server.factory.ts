import {
  AuthInfo,
  CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  ClientCapabilities,
  ProtocolError,
  ProtocolErrorCode,
  RequestId,
  RequestStateCodec,
  SERVER_INFO_META_KEY,
  ServerCapabilities,
  ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ErrorCode, isAppError } from '../common/app-error';
import { linearJsonSchemaValidator } from '../sdk/json-schema';
import type { McpBackend, WorkflowToolRecord } from './mcp-backend.port';
import { McpCall, McpEra } from './mcp-call';
import { decodeCursor, pageOf } from './paging';
import { complete, getPrompt, listPrompts } from './prompts';
import { McpProtocolServer } from './protocol-server';
import { RESOURCE_TEMPLATES } from './resources/resource-uris';
import { listResources, readResource } from './resources/resources';
import {
  cancelTask,
  createTask,
  getTask,
  TASK_ID_PARAMS,
  TASK_UPDATE_PARAMS,
  TASKS_EXTENSION,
  taskResult,
  updateTask,
  wantsTasks,
} from './tasks';
import { toolFailure } from './tool-errors';
import { CollectionTool } from './tools';
import type { ResourceLinkBlock } from './tools/tool-definition';
import { collectionTool, COLLECTION_TOOL_LISTING, ListedTool, workflowToolFingerprint, workflowToolListing } from './tools/tool-listing';
import { callWorkflowTool, FollowState, WorkflowCallOptions } from './workflow-calls';

/** Stamped on every 2026-07-28 result: short on purpose (the tools carry the icons). */
export const SERVER_INFO = { name: 'workflow-collection-service', title: 'Workflow and collection service', version: '0.1.0' };

const INSTRUCTIONS =
  'Document collections with semantic search, and workflows offered as tools. Find a collection with service_list_collections ' +
  '(or make one with service_create_collection), add documents by URL with service_add_file_to_collection, wait until ' +
  'service_list_collection_files shows them as indexed, then ask questions with service_search_collection: its hits link the ' +
  'passages and files (resources/read opens them; cite them by URI). The prompt answer_with_citations does the search for you. ' +
  'A workflow tool runs its workflow and answers with its output; a long one can run as a task, and an approval it waits at is ' +
  'asked of the user when the client can ask.';

/** tools/list pages: the eight collection tools and the caller's workflow tools. */
const TOOLS_PER_PAGE = 100;

export interface McpServerOptions {
  /** The backend acting for the caller of a request (the remote transports put the caller in `authInfo`). */
  backend(authInfo: AuthInfo | undefined): McpBackend;
  /** Failures that are bugs rather than AppErrors, for the log; the client only learns "internal". */
  onUnexpectedError?(error: unknown, where: string): void;
  /** Signs what a workflow tool call carries from one round to the next; every process sharing the store shares its key. */
  requestState: RequestStateCodec<FollowState>;
  /** How long a workflow tool call without a progress token follows its run before answering that it still runs. */
  toolTimeoutMs: number;
}

// The server builds its own JSON Schema validator unless given one (for the answers to the forms it
// asks clients to fill in, whose schemas users write): the service's one JSON Schema check, with
// linear-time patterns, serves every session and request.
const SCHEMA_VALIDATOR = linearJsonSchemaValidator;

function capabilitiesFor(era: McpEra): ServerCapabilities {
  const common: ServerCapabilities = { tools: { listChanged: true }, resources: {}, prompts: {}, completions: {} };
  // 2025-11-25 tasks are a capability; on 2026-07-28 they are the tasks extension, and the old capability must not be advertised.
  return era === 'legacy'
    ? { ...common, tasks: { cancel: {}, requests: { tools: { call: {} } } } }
    : ({ ...common, extensions: { [TASKS_EXTENSION]: {} } } as ServerCapabilities);
}

/** 2025-11-25's TaskMetadata: the task a tools/call asks for, with the time to keep it that the client would like (ms). */
const TASK_METADATA = z.looseObject({ ttl: z.number().int().nonnegative().optional() });
const CALL_PARAMS = z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional(), task: z.unknown().optional() });

/**
 * One MCP server instance on the SDK's low-level Server: the eight collection tools and the caller's
 * workflow tools, the collections, files, passages and runs as resources, two prompts, completion
 * of ids, and workflow calls as tasks. One instance serves one era: a 2025 session (per session),
 * a 2026-07-28 request (per request), or a stdio connection. Handlers read everything about the
 * caller from the request (authInfo, envelope), so building one is cheap; the tool listings are
 * built once per process.
 *
 * Each tool checks its own arguments (the REST API's DTOs, or the workflow's JSON Schema) and answers
 * a refusal, like any failure of the operation, with an `isError` result naming what to correct (MCP
 * 2025-11-25 lists input validation errors among tool execution errors); an unknown tool is a
 * protocol error (-32602).
 */
export class ServiceMcpServer {
  readonly server: McpProtocolServer;
  /** The workflow tools this session's client last heard of (2025 sessions: `list_changed` when they change). */
  private workflowToolsKnown?: string;
  private readonly calls: WorkflowCallOptions;

  constructor(
    private readonly options: McpServerOptions,
    readonly era: McpEra,
  ) {
    this.server = new McpProtocolServer(SERVER_INFO, {
      capabilities: capabilitiesFor(era),
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: SCHEMA_VALIDATOR,
      requestState: { verify: options.requestState.verify },
      // An approval waits for a person: a round may take long, and a run may ask several times.
      inputRequired: { maxRounds: 20, roundTimeoutMs: 60 * 60_000 },
    });
    this.calls = {
      toolTimeoutMs: options.toolTimeoutMs,
      mintState: (state) => options.requestState.mint(state),
      onUnexpectedError: options.onUnexpectedError,
    };
    const report = (where: string) => (error: unknown) => options.onUnexpectedError?.(error, where);
    const server = this.server;

    server.setRequestHandler('tools/list', async (request, ctx) => {
      const [offset] = decodeCursor('tools/list', request.params?.cursor);
      const listed = await this.listTools(this.callOf(ctx).backend);
      const { page, nextCursor } = pageOf('tools/list', listed, offset, TOOLS_PER_PAGE);
      return { tools: page.map((tool) => this.forEra(tool)), ...(nextCursor ? { nextCursor } : {}) };
    });
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args = {} } = request.params;
      const tool = collectionTool(name);
      if (tool) return runCollectionTool(tool, args, this.callOf(ctx).backend, options);
      return callWorkflowTool(name, args, this.callOf(ctx), this.calls);
    });
    server.toolCallDoor = (request, ctx) => this.asTask(request.params, ctx);

    server.setRequestHandler('resources/list', async (request, ctx) => listResources(this.callOf(ctx).backend, request.params?.cursor));
    server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
    server.setRequestHandler('resources/read', async (request, ctx) =>
      readResource(this.callOf(ctx).backend, request.params.uri, report('resources/read')),
    );
    server.setRequestHandler('prompts/list', async (request) => listPrompts(request.params?.cursor));
    server.setRequestHandler('prompts/get', async (request, ctx) =>
      getPrompt(this.callOf(ctx).backend, request.params.name, request.params.arguments, report('prompts/get')),
    );
    server.setRequestHandler('completion/complete', async (request, ctx) => {
      const { ref, argument, context } = request.params;
      return complete(this.callOf(ctx).backend, ref, argument.name, argument.value, context?.arguments, report('completion/complete'));
    });

    // The task methods, in the era's form. They are registered with their params schema (the SDK's
    // custom-method form): the 2026-07-28 revision has them from the tasks extension, not from its core.
    server.setRequestHandler('tasks/get', { params: TASK_ID_PARAMS }, async ({ taskId }, ctx) => getTask(taskId, this.callOf(ctx)));
    server.setRequestHandler('tasks/cancel', { params: TASK_ID_PARAMS }, async ({ taskId }, ctx) => cancelTask(taskId, this.callOf(ctx)));
    if (era === 'legacy') {
      server.setRequestHandler('tasks/result', { params: TASK_ID_PARAMS }, async ({ taskId }, ctx) => taskResult(taskId, this.callOf(ctx)));
    } else {
      server.setRequestHandler('tasks/update', { params: TASK_UPDATE_PARAMS }, async ({ taskId }, ctx) =>
        updateTask(taskId, this.callOf(ctx)),
      );
    }
  }

  /**
   * Records the caller's workflow tools as this 2025 session's client knows them, and tells it
   * `notifications/tools/list_changed` when they differ from what it was last told (and only then).
   */
  workflowToolsChanged(listed: readonly WorkflowToolRecord[]): void {
    const known = listed.map(workflowToolFingerprint).join('\n');
    if (this.workflowToolsKnown === undefined || this.workflowToolsKnown === known) {
      this.workflowToolsKnown = known;
      return;
    }
    this.workflowToolsKnown = known;
    if (this.server.transport) void this.server.notification({ method: 'notifications/tools/list_changed' }).catch(() => undefined);
  }

  private async listTools(backend: McpBackend): Promise<ListedTool[]> {
    let workflows: WorkflowToolRecord[] = [];
    try {
      workflows = await backend.listWorkflowTools();
      this.workflowToolsChanged(workflows);
    } catch (error) {
      // A store that cannot list them leaves the collection tools usable.
      if (!isAppError(error) || error.code === ErrorCode.INTERNAL) this.options.onUnexpectedError?.(error, 'tools/list');
    }
    return [...COLLECTION_TOOL_LISTING, ...workflows.filter((tool) => !collectionTool(tool.name)).map(workflowToolListing)];
  }

  /** Task support is said per tool in 2025-11-25 (`execution`); the 2026-07-28 client learns it from the extension. */
  private forEra(tool: ListedTool): ListedTool {
    if (this.era === 'legacy' || !tool.execution) return tool;
    const { execution: _, ...rest } = tool;
    return rest;
  }

  /** A tools/call that runs as a task (2025-11-25: the client asked with `task`; 2026-07-28: it declared the extension), or undefined. */
  private async asTask(params: unknown, ctx: ServerContext) {
    const parsed = CALL_PARAMS.safeParse(params);
    if (!parsed.success) return undefined;
    if (parsed.data.task !== undefined && !TASK_METADATA.safeParse(parsed.data.task).success)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'Invalid tools/call request: task must be an object, its ttl a whole number of ms >= 0',
      );
    if (collectionTool(parsed.data.name)) return undefined;
    const call = this.callOf(ctx);
    if (this.era === 'legacy' ? parsed.data.task === undefined : !wantsTasks(call)) return undefined;
    const { name, arguments: args = {} } = parsed.data;
    return createTask(name, args, call);
  }

  /** The request as the tools, resources, prompts and tasks see it. */
  private callOf(ctx: ServerContext): McpCall {
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    const client = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? this.server.getClientCapabilities() ?? {}) as ClientCapabilities;
    return {
      backend: this.options.backend(ctx.http?.authInfo),
      era: this.era,
      client,
      progressToken: ctx.mcpReq._meta?.progressToken,
      notify: (notification) => ctx.mcpReq.notify(notification),
      signal: ctx.mcpReq.signal,
      inputResponses: ctx.mcpReq.inputResponses,
      requestState: <T>() => ctx.mcpReq.requestState() as T | undefined,
      ...(this.era === 'legacy' ? { elicit: (params) => ctx.mcpReq.elicitInput(params) } : {}),
    };
  }
}

/** What a collection tool call produced: its output (and its JSON, the text block), the links that follow it, or its failure. */
type CollectionToolOutcome = { output: Record<string, unknown>; json: string; links: ResourceLinkBlock[] } | { failure: CallToolResult };

/** One collection tool call: arguments checked by the REST API's own DTOs, then the shared service. */
async function collectionToolOutcome(
  tool: CollectionTool,
  args: Record<string, unknown>,
  backend: McpBackend,
  options: Pick<McpServerOptions, 'onUnexpectedError'>,
): Promise<CollectionToolOutcome> {
  try {
    // The REST API's own input DTOs: the same bad input gets the same refusal at both doors.
    const parsed = tool.input.parse(args);
    // Parsing projects the result onto the declared fields, so structuredContent always matches outputSchema.
    const output = tool.output.parse(await tool.run(backend, parsed));
    return { output, json: JSON.stringify(output), links: tool.links?.(output, parsed) ?? [] };
  } catch (error) {
    if (!isAppError(error) || error.code === ErrorCode.INTERNAL) options.onUnexpectedError?.(error, tool.name);
    return { failure: toolFailure(error) };
  }
}

/** A collection tool's result: the text block is the JSON of structuredContent, and the links to what it names follow it. */
export async function runCollectionTool(
  tool: CollectionTool,
  args: Record<string, unknown>,
  backend: McpBackend,
  options: Pick<McpServerOptions, 'onUnexpectedError'>,
): Promise<CallToolResult> {
  const outcome = await collectionToolOutcome(tool, args, backend, options);
  if ('failure' in outcome) return outcome.failure;
  return { content: [{ type: 'text', text: outcome.json }, ...outcome.links], structuredContent: outcome.output };
}

const MODERN_RESULT_TAIL = `,"resultType":"complete","_meta":${JSON.stringify({ [SERVER_INFO_META_KEY]: SERVER_INFO })}`;

/**
 * The JSON-RPC response (its JSON) to a plain `tools/call` of a collection tool, for the HTTP door's
 * fast path (see McpHttpEndpoints): what the SDK's server would answer in `era`, less its
 * per-request schema checks of a request already checked for shape and of a result built here, and
 * written in one pass (the output's JSON is both the text block and structuredContent). Undefined
 * for any other tool, which the SDK serves.
 */
export async function answerCollectionToolCall(
  era: McpEra,
  id: RequestId,
  name: string,
  args: Record<string, unknown>,
  backend: McpBackend,
  options: Pick<McpServerOptions, 'onUnexpectedError'>,
): Promise<string | undefined> {
  const tool = collectionTool(name);
  if (!tool) return undefined;
  const outcome = await collectionToolOutcome(tool, args, backend, options);
  const tail = era === 'modern' ? MODERN_RESULT_TAIL : '';
  let result: string;
  if ('failure' in outcome) result = `${JSON.stringify(outcome.failure).slice(0, -1)}${tail}}`;
  else {
    const links = outcome.links.map((link) => `,${JSON.stringify(link)}`).join('');
    result = `{"content":[{"type":"text","text":${JSON.stringify(outcome.json)}}${links}],"structuredContent":${outcome.json}${tail}}`;
  }
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`;
}

/**
 * Whether a plain `tools/call` of a workflow tool from a client with these capabilities can be
 * answered by answerWorkflowToolCall: the client can be asked nothing (no elicitation, so the call
 * never answers `input_required`) and does not take its calls as tasks (2026-07-28: the extension).
 */
export const plainWorkflowClient = (client: ClientCapabilities): boolean =>
  client.elicitation === undefined && (client.extensions as Record<string, unknown> | undefined)?.[TASKS_EXTENSION] === undefined;

/**
 * The JSON-RPC response (its JSON) to a plain `tools/call` of a workflow tool (no progress token,
 * no task, not a retried round) from a client plainWorkflowClient accepts, for the HTTP door's fast
 * path: the same callWorkflowTool the SDK's handler runs, its result written in one pass without
 * the SDK's per-request transport and checks. Undefined for a collection tool, and for an unknown
 * tool (a protocol error, which the SDK answers; nothing was started).
 */
export async function answerWorkflowToolCall(
  era: McpEra,
  id: RequestId,
  name: string,
  args: Record<string, unknown>,
  request: { backend: McpBackend; client: ClientCapabilities; signal: AbortSignal },
  options: McpServerOptions,
): Promise<string | undefined> {
  if (collectionTool(name)) return undefined;
  const call: McpCall = {
    ...request,
    era,
    notify: async () => undefined,
    requestState: () => undefined,
  };
  let result: Awaited<ReturnType<typeof callWorkflowTool>>;
  try {
    result = await callWorkflowTool(name, args, call, {
      toolTimeoutMs: options.toolTimeoutMs,
      mintState: (state) => options.requestState.mint(state),
      onUnexpectedError: options.onUnexpectedError,
    });
  } catch (error) {
    // An unknown tool, refused before anything started: the SDK answers it, as it would any call of one.
    if (error instanceof ProtocolError) return undefined;
    throw error;
  }
  // A CallToolResult: without elicitation the call asks nothing (input_required), whatever the run does.
  const tail = era === 'modern' ? MODERN_RESULT_TAIL : '';
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result).slice(0, -1)}${tail}}}`;
}

/** A server instance for one era, from the options its door shares between instances. */
export const createMcpServer = (options: McpServerOptions, era: McpEra) => new ServiceMcpServer(options, era);
