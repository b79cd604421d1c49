import { AppError, ErrorCode } from '../../common/app-error';
import type { ApprovalDecision, McpBackend, PassageRecord, SearchQuery, ToolRunRecord, WorkflowToolRecord } from '../mcp-backend.port';
import type { CollectionRecord, CollectionStatsRecord, FileRecord, SearchHit } from '../tools/records';
import type { RerankOutcome } from '../../collections/search.service';

const REQUEST_TIMEOUT_MS = 60_000;
/** The longest `?wait=` the service holds a tool run's request for (seconds). */
const MAX_FOLLOW_SECONDS = 30;
const KNOWN_CODES = new Set<string>(Object.values(ErrorCode));

/** Error codes for a status when the body is not the service's error body (a proxy answered, say). */
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: ErrorCode.VALIDATION_FAILED,
  401: ErrorCode.UNAUTHENTICATED,
  403: ErrorCode.FORBIDDEN,
  404: ErrorCode.NOT_FOUND,
  409: ErrorCode.CONFLICT,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  429: ErrorCode.RATE_LIMITED,
};

/**
 * The tools' backend for the stdio program: the service's REST API, called with one API key.
 * The service's error bodies `{code, message, details}` come back as the AppErrors they were.
 */
export class RestCollectionsBackend implements McpBackend {
  private readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly apiKey: string,
  ) {
    // Keep a path prefix (a service behind a reverse proxy at /service) by appending, not resolving.
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  listCollections(page: { offset: number; limit: number }) {
    return this.call<{ items: CollectionRecord[]; total: number }>('GET', `/api/v1/collections?offset=${page.offset}&limit=${page.limit}`);
  }

  getCollection(collectionId: string) {
    return this.call<CollectionRecord>('GET', `/api/v1/collections/${enc(collectionId)}`);
  }

  getCollectionStats(collectionId: string) {
    return this.call<CollectionStatsRecord>('GET', `/api/v1/collections/${enc(collectionId)}/stats`);
  }

  createCollection(name: string) {
    return this.call<CollectionRecord>('POST', '/api/v1/collections', { name });
  }

  listFiles(collectionId: string, page: { offset: number; limit: number; status?: 'indexed' }) {
    return this.call<{ items: FileRecord[]; total: number }>(
      'GET',
      `/api/v1/collections/${enc(collectionId)}/files?offset=${page.offset}&limit=${page.limit}${page.status ? `&status=${page.status}` : ''}`,
    );
  }

  getFile(collectionId: string, fileId: string) {
    return this.call<FileRecord>('GET', `/api/v1/collections/${enc(collectionId)}/files/${enc(fileId)}`);
  }

  fileText(collectionId: string, fileId: string) {
    return this.call<{ name: string; type: string; content: string }>(
      'GET',
      `/api/v1/collections/${enc(collectionId)}/files/${enc(fileId)}/content`,
    );
  }

  getPassage(collectionId: string, fileId: string, passageId: string) {
    return this.call<PassageRecord>('GET', `/api/v1/collections/${enc(collectionId)}/files/${enc(fileId)}/passages/${enc(passageId)}`);
  }

  addFile(collectionId: string, file: { name: string; url: string }) {
    return this.call<FileRecord>('POST', `/api/v1/collections/${enc(collectionId)}/files`, file);
  }

  async deleteFile(collectionId: string, fileId: string): Promise<void> {
    await this.call('DELETE', `/api/v1/collections/${enc(collectionId)}/files/${enc(fileId)}`);
  }

  search(collectionId: string, query: SearchQuery) {
    return this.call<{ result: SearchHit[]; rerank?: RerankOutcome }>(
      'POST',
      `/api/v1/collections/${enc(collectionId)}/search`,
      searchBody(query),
    );
  }

  searchMany(target: { collectionIds: readonly string[] } | { all: true }, query: SearchQuery) {
    return this.call<{ result: (SearchHit & { collectionId: string })[]; rerank?: RerankOutcome }>('POST', '/api/v1/search', {
      ...('all' in target ? { all: true } : { collection_ids: target.collectionIds }),
      ...searchBody(query),
    });
  }

  async listWorkflowTools(): Promise<WorkflowToolRecord[]> {
    return (await this.call<{ items: WorkflowToolRecord[] }>('GET', '/api/v1/workflow-tools')).items;
  }

  startWorkflowTool(name: string, args: Record<string, unknown>) {
    return this.call<ToolRunRecord>('POST', `/api/v1/workflow-tools/${enc(name)}/runs`, args);
  }

  toolRun(runId: string) {
    return this.call<ToolRunRecord>('GET', `/api/v1/tool-runs/${enc(runId)}`);
  }

  waitForToolRun(runId: string, ms: number) {
    const seconds = Math.min(MAX_FOLLOW_SECONDS, Math.max(0, Math.floor(ms / 1000)));
    return this.call<ToolRunRecord>('GET', `/api/v1/tool-runs/${enc(runId)}?wait=${seconds}`);
  }

  cancelToolRun(runId: string) {
    return this.call<ToolRunRecord>('POST', `/api/v1/tool-runs/${enc(runId)}/cancel`);
  }

  async decideApproval(runId: string, nodeId: string, decision: ApprovalDecision): Promise<void> {
    await this.call('POST', `/api/v1/runs/${enc(runId)}/approvals/${enc(nodeId)}`, decision);
  }

  private async call<T>(method: string, path: string, body?: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
      throw new AppError(
        ErrorCode.UNAVAILABLE,
        `Cannot reach the service at ${this.baseUrl} (${reason}); check SERVICE_URL and that the service is running`,
        {
          cause,
          retryable: true,
        },
      );
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (response.ok) return parsed as T;
    throw errorFromResponse(response.status, parsed);
  }
}

const enc = encodeURIComponent;

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function errorFromResponse(status: number, body: unknown): AppError {
  const { code, message, details } = (typeof body === 'object' && body !== null ? body : {}) as {
    code?: unknown;
    message?: unknown;
    details?: unknown;
  };
  const known = typeof code === 'string' && KNOWN_CODES.has(code) ? (code as ErrorCode) : undefined;
  const fallback = CODE_BY_STATUS[status] ?? (status >= 500 ? ErrorCode.UNAVAILABLE : ErrorCode.VALIDATION_FAILED);
  const resolved = known ?? fallback;
  const text =
    resolved === ErrorCode.UNAUTHENTICATED
      ? `The service refused the API key (${typeof message === 'string' ? message : `HTTP ${status}`}); check SERVICE_API_KEY`
      : typeof message === 'string'
        ? message
        : `The service answered HTTP ${status}`;
  return new AppError(resolved, text, { details, retryable: status >= 500 || status === 429 });
}

const searchBody = (query: SearchQuery) => ({
  text: query.text,
  top_k: query.topK,
  offset: query.offset,
  ...(query.filter !== undefined ? { filter: query.filter } : {}),
  ...(query.rerank ? { rerank: query.rerank } : {}),
});
