/**
 * Everything a node may use while it runs. A node never sees Nest, the store or the queue: what it
 * needs from the service arrives through these interfaces, so a node is a plain function to test.
 */

export type RunMode = 'input' | 'item';

/** A variable as nodes and expressions read it; secrets arrive decrypted. */
export type VariableValue = string | number | boolean;

export interface NodeLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD';

export interface NodeHttpRequest {
  method?: HttpMethod;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Largest response body accepted; the service caps it. */
  maxBytes?: number;
  timeoutMs?: number;
  /** Default true. */
  followRedirects?: boolean;
  /**
   * A credential's id (`crd_...`): the service injects it at send time (a header, a query
   * parameter, a fetched OAuth2 token) with the rights of the user the run acts as. The node never
   * sees its value, and neither do records, errors or logs.
   */
  credential?: string;
  /** Ends this request early, besides the node's own signal (which always applies). */
  signal?: AbortSignal;
  /**
   * Called with each piece of a successful (2xx) response body as it arrives, for a node that
   * reads a stream as it comes (server-sent events); the whole body is still the response's.
   */
  onChunk?: (chunk: Buffer) => void;
}

export interface NodeHttpResponse {
  status: number;
  /** The final URL, after redirects. */
  url: string;
  /** Lower-case names, string values. */
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Outbound HTTP through the service's guarded client: private addresses are refused (unless the
 * operator allowed them), sizes and times are capped, and the run's signal is applied for you.
 * Any status is returned; failures throw NodeConfigurationError (refused URL), NodeUpstreamError
 * or NodeTimeoutError.
 */
export interface NodeHttpClient {
  fetch(url: string, request?: NodeHttpRequest): Promise<NodeHttpResponse>;
}

/** A file of a collection, as INTERFACE.md section 2 shows it. */
export interface CollectionFile {
  id: string;
  /** The collection the file belongs to: Get File Contents reads it from here when not told. */
  collectionId: string;
  name: string;
  type: string;
  size: number;
  status: string;
  /** ISO 8601, UTC. */
  createdAt: string;
}

export interface CollectionFileContent {
  id: string;
  name: string;
  type: string;
  /** The extracted text of the file. */
  content: string;
}

/** A collection the user may see, with their role on it. */
export interface CollectionSummary {
  id: string;
  name: string;
  role: 'owner' | 'editor' | 'viewer';
  /** ISO 8601, UTC. */
  createdAt: string;
  updatedAt: string;
}

export type SearchMode = 'vector' | 'hybrid';

/** A passage found by a semantic search, nearest first. */
export interface CollectionPassage {
  /** Identifier of the passage (chunk). */
  id: string;
  content: string;
  /** Cosine distance to the query, from 0 (same meaning) up. */
  distance: number;
  fileId: string;
  fileName: string;
  /** 1-based PDF page the passage starts on, when known. */
  page: number | null;
  /** The reranker's relevance score (larger is more relevant), when the search was reranked. */
  rerankScore?: number;
}

/** What became of a search's reranking, when it was to be reranked (a hybrid search with a reranker configured). */
export interface CollectionSearchRerank {
  /** False: the reranker failed, and the passages come in the search's own order. */
  applied: boolean;
  /** Passages given to the reranker. */
  candidates: number;
  error?: string;
}

/**
 * Collections as the user who started the run may see them: every call checks that user's role
 * (viewer at least; editor to add files). A collection or file the user cannot see, or that does
 * not exist, fails with NodeConfigurationError (`details.code` NOT_FOUND or FORBIDDEN); a store that
 * is down fails with a retryable NodeUpstreamError.
 */
export interface CollectionsFacade {
  /** The collections the user may see (any role), newest first as the API lists them; `limit` is 1 to 100. */
  listCollections(page: { offset: number; limit: number }): Promise<{ items: CollectionSummary[]; total: number }>;
  /** Files in the order they were added; `limit` is 1 to 100; `status` keeps only files in those states. */
  listFiles(
    collectionId: string,
    page: { offset: number; limit: number; status?: readonly string[] },
  ): Promise<{ items: CollectionFile[]; total: number }>;
  /**
   * The extracted text of an indexed file. A file without text yet (still being ingested) or for
   * good (its ingestion failed) fails with NodeConfigurationError whose `details.status` is the
   * file's status.
   */
  getFileContent(collectionId: string, fileId: string): Promise<CollectionFileContent>;
  /**
   * Semantic search: `topK` (1 to 100) passages from `offset`, nearest first, as the search API
   * answers; `filter` keeps only passages of the files it matches (the search API's filter, e.g.
   * `{ field: 'metadata.year', gte: 2020 }`), refused with NodeConfigurationError naming the place;
   * a hybrid search is reranked when the service has a reranker configured.
   */
  search(
    collectionId: string,
    query: { text: string; topK: number; offset: number; mode: SearchMode; filter?: Record<string, unknown> },
  ): Promise<{ items: CollectionPassage[]; rerank?: CollectionSearchRerank }>;
  /**
   * Adds a file by URL, as the API does (editor role); ingestion runs in the background, so the
   * file comes back `pending` and is searchable once `indexed`.
   */
  addFile(collectionId: string, file: { name: string; url: string }): Promise<CollectionFile>;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** An assistant message that asked for tool calls. */
  toolCalls?: readonly ChatToolCall[];
  /** A `tool` message: the call it answers. */
  toolCallId?: string;
}

/** A function a model may call: its name, what it does, and the JSON Schema of its arguments. */
export interface ChatTool {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

/** A call the model asked for. */
export interface ChatToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them: JSON text, not checked. */
  arguments: string;
}

export interface ChatRequest {
  /** Default: the service's configured model (LLM_MODEL); required with `endpoint`. */
  model?: string;
  /**
   * Another OpenAI-compatible endpoint than the service's (LLM_URL): its base URL, and the
   * credential that authenticates to it. Reached through the outbound guard, as ctx.http is.
   */
  endpoint?: { url: string; credential?: string };
  messages: readonly ChatMessage[];
  /** Ask for a JSON answer matching this JSON Schema; `json` then holds it parsed. */
  responseSchema?: Record<string, unknown>;
  temperature?: number;
  maxTokens?: number;
  /** Functions the model may ask to call; its answer then may hold `toolCalls` instead of text. */
  tools?: readonly ChatTool[];
  /** Streams the answer: called with each piece of its text as it arrives. */
  onToken?: (text: string) => void;
}

export interface ChatResponse {
  /** The answer's text. */
  content: string;
  /** The answer parsed as JSON, when `responseSchema` was given. */
  json?: unknown;
  model: string;
  usage?: { promptTokens: number; completionTokens: number };
  /** The tools the model asked to call (with `tools`), in its order. */
  toolCalls?: ChatToolCall[];
}

/**
 * The language model endpoint the service is configured with (any OpenAI-compatible chat
 * completions server: LLM_URL, LLM_API_KEY, LLM_MODEL). Without one, calls fail with
 * NodeConfigurationError; 429, 5xx and network failures are retried inside, then fail with a
 * retryable NodeUpstreamError.
 */
export interface LanguageModels {
  chat(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse>;
}

/**
 * JavaScript in the service's isolated sandbox, outside the service's process, with the limits of
 * expressions (memory, CPU time; no require, process, timers or network). `code` is a function
 * body: the names of `scope` are its variables, and what it returns must be JSON (no NaN,
 * Infinity, undefined in an array, function, BigInt or cycle) and is the result. Failures name
 * `nodeId` and are never retried: the code's own (an exception, with its line and column in
 * `code`; a syntax error; a result that is not JSON, with its path) are CODE_ERROR, and a limit
 * reached is TIMEOUT (CPU time) or MEMORY_LIMIT.
 */
export interface CodeSandbox {
  run(code: string, scope: Record<string, unknown>, signal: AbortSignal, about?: { nodeId?: string }): Promise<unknown>;
}

/** What a sub-workflow run gave back. */
export interface WorkflowRunResult {
  runId: string;
  status: 'succeeded' | 'failed' | 'canceled';
  /** The run's output: its Respond node's, else its end node's (its end nodes' keyed by id); undefined unless it succeeded. */
  output: unknown;
  error?: { code: string; message: string };
}

/**
 * Other workflows, run with the rights of the user who started this run (editor on the workflow).
 * `execute` runs the active published version (or the draft, for `test`) as a child run of this
 * one, linked both ways in the run records, and resolves once it has finished.
 */
export interface WorkflowsFacade {
  execute(
    workflowId: string,
    input: unknown,
    options: { runType?: 'production' | 'test'; signal: AbortSignal },
  ): Promise<WorkflowRunResult>;
  /**
   * The MCP tool a published workflow offers (its `mcp-trigger`: name, description, input schema),
   * for a node that offers it to a model; the same rights as `execute`. A workflow without one
   * fails with NodeConfigurationError.
   */
  describeTool(workflowId: string): Promise<WorkflowToolInfo>;
}

/** A workflow as a tool: what its published version's MCP trigger declares. */
export interface WorkflowToolInfo {
  workflowId: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** An outside MCP server (Streamable HTTP), reached through the outbound guard. */
export interface McpServerRef {
  url: string;
  /** A credential id (`crd_...`) injected into every request to the server, as for ctx.http. */
  credential?: string;
}

/** A tool an MCP server offers. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** What a tool call answered, as the MCP server sent it. */
export interface McpToolResult {
  content: ReadonlyArray<{ type: string; text?: string; [key: string]: unknown }>;
  /** The text blocks of `content`, joined by new lines ('' when none). */
  text: string;
  structuredContent?: Record<string, unknown>;
  /** The tool failed (its content says why). */
  isError: boolean;
}

/** One connection to an MCP server; close it when done. */
export interface McpSession {
  listTools(): Promise<McpToolInfo[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<McpToolResult>;
  close(): Promise<void>;
}

/**
 * Outside MCP servers over Streamable HTTP, through the service's guarded HTTP client: private
 * addresses refused unless the operator allowed them, the credential injected at send time.
 * Failures to connect are NodeUpstreamError (NodeConfigurationError for a refused URL).
 */
export interface McpClients {
  connect(server: McpServerRef, signal: AbortSignal): Promise<McpSession>;
}

/**
 * Conversations a node remembers between runs, per session key, kept in the service's store and
 * private to the workflow and node that wrote them.
 */
export interface ConversationMemory {
  /** The messages kept for the session, oldest first; empty when none are or they expired. */
  load(sessionKey: string): Promise<ChatMessage[]>;
  /** Adds messages, keeping the newest `window`; the session is forgotten `ttlMs` after this. */
  append(sessionKey: string, messages: readonly ChatMessage[], options: { window: number; ttlMs: number }): Promise<void>;
}

/** A model call or tool call inside a node, as the run record shows it (masked by the service). */
export interface NodeSubStep {
  kind: 'model' | 'tool';
  /** The model's name, or the tool's. */
  name: string;
  /** ISO 8601. */
  startedAt: string;
  durationMs: number;
  tokens?: { prompt: number; completion: number };
  arguments?: unknown;
  result?: unknown;
  error?: string;
}

/**
 * What a node reports while it runs: each finished sub-step (kept in its step record, secrets
 * masked) and the pieces of a streamed answer, both seen live by whoever follows the run (a chat).
 */
export interface NodeProgress {
  subStep(step: NodeSubStep): void;
  token(text: string): void;
}

/** `ctx.approvals`: the links a person opens to decide on an approval node's wait. */
export interface ApprovalsFacade {
  /**
   * The signed link (to the service's public URL) that shows this node's pending approval and
   * takes one decision, valid until `expiresAt`.
   */
  link(expiresAt: Date): string;
}

/** One incoming edge of a node, in the order of the definition's edges. */
export interface NodeInput {
  /** The predecessor's node id, and which of its outputs the edge takes. */
  from: string;
  output: string;
  /** False when the predecessor produced nothing on that output (or was skipped): `data` is then undefined. */
  live: boolean;
  data: unknown;
}

/** Where a loop node stands; see NodeDefinition.loop. */
export interface LoopState {
  /** 0 on the first execution. */
  iteration: number;
  /** What the body gave back to the loop node (its back edges) in each iteration so far. */
  results: readonly unknown[];
}

interface CommonContext<P> {
  /** Parameters after expressions were evaluated, validated against the node's parameter class. */
  readonly params: P;
  readonly variables: Readonly<Record<string, VariableValue>>;
  /** Outputs of the nodes that ran before this one, by node id. */
  readonly nodes: Readonly<Record<string, unknown>>;
  /**
   * The node's incoming edges. With one, `input` is its data; with several, `input` is the array
   * of the live ones' data in edge order, and this says which came from where (Merge reads it).
   */
  readonly inputs: readonly NodeInput[];
  /** Set for loop nodes only. */
  readonly loop?: LoopState;
  readonly collections: CollectionsFacade;
  readonly models: LanguageModels;
  readonly sandbox: CodeSandbox;
  readonly workflows: WorkflowsFacade;
  readonly approvals: ApprovalsFacade;
  readonly http: NodeHttpClient;
  /** Outside MCP servers, through `http`'s guard and credentials. */
  readonly mcp: McpClients;
  /** Sub-steps and streamed tokens, for the run record and whoever follows the run. */
  readonly progress: NodeProgress;
  /** Conversations kept between runs (an agent's memory). */
  readonly memory: ConversationMemory;
  /** Scoped to the run and node; secret values are masked before anything is written. */
  readonly logger: NodeLogger;
  /**
   * `value` with the run's masks applied as they stand (the values credentials injected so far,
   * secret variables), as the run record would show it: for what a node itself sends on, e.g. an
   * agent's tool results on their way to its model.
   */
  mask<T>(value: T): T;
  /** Aborted on the node's timeout, the run's timeout or a cancel: pass it to anything that waits. */
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly workflowId: string;
  readonly nodeId: string;
}

/** Run mode `input`: the node runs once with its whole input. */
export interface InputModeContext<P> extends CommonContext<P> {
  readonly runMode: 'input';
  readonly input: unknown;
}

/** Run mode `item`: the node runs once per element of its input array, in order. */
export interface ItemModeContext<P> extends CommonContext<P> {
  readonly runMode: 'item';
  readonly item: unknown;
  readonly itemIndex: number;
}

export type NodeContext<P> = InputModeContext<P> | ItemModeContext<P>;
