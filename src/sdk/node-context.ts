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

/**
 * Collections as the user who started the run may see them: every call checks that user's role
 * (viewer at least). A collection or file the user cannot see, or that does not exist, fails with
 * NodeConfigurationError (`details.code` NOT_FOUND or FORBIDDEN); a store that is down fails with
 * a retryable NodeUpstreamError.
 */
export interface CollectionsFacade {
  /** Files in the order they were added; `limit` is 1 to 100. */
  listFiles(collectionId: string, page: { offset: number; limit: number }): Promise<{ items: CollectionFile[]; total: number }>;
  /**
   * The extracted text of an indexed file. A file without text yet (still being ingested) or for
   * good (its ingestion failed) fails with NodeConfigurationError whose `details.status` is the
   * file's status.
   */
  getFileContent(collectionId: string, fileId: string): Promise<CollectionFileContent>;
}

interface CommonContext<P> {
  /** Parameters after expressions were evaluated, validated against the node's parameter class. */
  readonly params: P;
  readonly variables: Readonly<Record<string, VariableValue>>;
  /** Outputs of the nodes that ran before this one, by node id. */
  readonly nodes: Readonly<Record<string, unknown>>;
  readonly collections: CollectionsFacade;
  readonly http: NodeHttpClient;
  /** Scoped to the run and node; secret values are masked before anything is written. */
  readonly logger: NodeLogger;
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
