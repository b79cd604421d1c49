// Every setting, one property per environment variable with its validation and the doc comment
// the generated configuration reference (docs/configuration.md) is made from. Values derived from
// them and the loading of the environment live in app-config.ts.
import 'reflect-metadata';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { availableParallelism, cpus } from 'node:os';
import { bool, emptyToUndefined, int, list, NotWeakSecret } from './setting-values';

/**
 * Most passages one search hands a reranker: a bound on the request and on the endpoint's work.
 * The same bound as MAX_RERANK_TOP_N in domain/reranker.port.ts, which config (beneath the domain)
 * may not import.
 */
const RERANK_TOP_N_MAX = 200;

export type AppRole = 'all' | 'api' | 'worker';

/** Every setting; AppConfig (app-config.ts) extends this class. Property names are the variable names. */
export class AppSettings {
  /** HTTP port of the API (roles `all` and `api`). */
  @Transform(int)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  /** Listen address. */
  @IsString()
  HOST = '0.0.0.0';

  /** The SQLite file, blobs and the generated secrets key; must be writable by the service's user (checked at boot). */
  @IsString()
  @MinLength(1)
  DATA_DIR = './data';

  /** `all`: API and background work; `api`: HTTP only; `worker`: background jobs only (no API, health on WORKER_HEALTH_PORT). */
  @IsIn(['all', 'api', 'worker'])
  APP_ROLE: AppRole = 'all';

  /**
   * The address people reach the service at (behind a proxy, its public https URL): approval links point there.
   * @default `http://localhost:<PORT>`
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL' })
  PUBLIC_URL?: string;

  /** Level of the JSON log lines (pino) on stdout. */
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  /** Use MongoDB (and GridFS for blobs) instead of SQLite. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^mongodb(\+srv)?:\/\//, { message: 'must start with mongodb:// or mongodb+srv://' })
  MONGODB_URI?: string;

  /** Use Elasticsearch instead of the embedded index (SQLite, FTS5 and HNSW). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\//, { message: 'must be an http(s) URL' })
  ELASTICSEARCH_URL?: string;

  /** API key for a secured Elasticsearch. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  ELASTICSEARCH_API_KEY?: string;

  /** Name of the Elasticsearch index of passages. */
  @IsString()
  @MinLength(1)
  ELASTICSEARCH_INDEX = 'service-passages';

  /** HNSW over int8 vectors (default: recall of float HNSW at a quarter of the memory), over 1-bit BBQ vectors (a 32nd), or over floats. */
  @IsIn(['int8_hnsw', 'bbq_hnsw', 'hnsw'])
  ELASTICSEARCH_VECTOR_INDEX: 'int8_hnsw' | 'bbq_hnsw' | 'hnsw' = 'int8_hnsw';

  /** Use Bull on Redis instead of the in-process queue (required to run several processes). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'must start with redis:// or rediss://' })
  REDIS_URL?: string;

  /**
   * When the store has no user, an admin owning this key is created at boot. 16 characters or more;
   * placeholders (change-me...) and keys of fewer than 8 different characters are refused.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'must be at least 16 characters' })
  @NotWeakSecret()
  BOOTSTRAP_API_KEY?: string;

  /** Largest accepted JSON request body, in bytes. */
  @Transform(int)
  @IsInt()
  @Min(1024)
  BODY_LIMIT_BYTES = 1024 * 1024;

  /** Largest file accepted by download or upload, in bytes. */
  @Transform(int)
  @IsInt()
  @Min(1)
  MAX_FILE_BYTES = 100 * 1024 * 1024;

  /** Host names, IPs or CIDRs the outbound client may reach even though they are private. */
  @Transform(list)
  @IsString({ each: true })
  FETCH_ALLOWED_HOSTS: string[] = [];

  /** A PEM file of certificate authorities the outbound client trusts beside the public ones (an internal CA). */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  FETCH_CA_FILE?: string;

  /** Outbound requests (downloads, HTTP Request nodes, model servers) give up connecting after this long. */
  @Transform(int)
  @IsInt()
  @Min(1)
  FETCH_CONNECT_TIMEOUT_MS = 10_000;

  /** Outbound requests give up after this long in all. */
  @Transform(int)
  @IsInt()
  @Min(1)
  FETCH_TIMEOUT_MS = 120_000;

  /** OpenAI-compatible embeddings endpoint; unset means the local sentence encoder. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\//, { message: 'must be an http(s) URL' })
  EMBEDDINGS_URL?: string;

  /** Bearer key for EMBEDDINGS_URL. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  EMBEDDINGS_API_KEY?: string;

  /** Model name sent to EMBEDDINGS_URL. */
  @IsString()
  EMBEDDINGS_MODEL = 'text-embedding-3-small';

  /**
   * A `/rerank` endpoint (Cohere, Jina or text-embeddings-inference: RERANK_KIND) that reorders the
   * top RERANK_TOP_N passages of every hybrid search; unset means no reranking unless a search names
   * an endpoint of its own.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\//, { message: 'must be an http(s) URL' })
  RERANK_URL?: string;

  /** The shape RERANK_URL speaks: `cohere` (Cohere v2), `jina`, or `tei` (Hugging Face text-embeddings-inference). */
  @IsIn(['cohere', 'jina', 'tei'])
  RERANK_KIND: 'cohere' | 'jina' | 'tei' = 'cohere';

  /** Sent to Cohere and Jina endpoints; text-embeddings-inference serves one model and takes none. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  RERANK_MODEL?: string;

  /** Sent as a bearer token to RERANK_URL. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  RERANK_API_KEY?: string;

  /** Passages of a search the reranker reorders unless the search says otherwise (its `rerank.top_n`). */
  @Transform(int)
  @IsInt()
  @Min(1)
  @Max(RERANK_TOP_N_MAX)
  RERANK_TOP_N = 50;

  /** Whole exchange with a reranker; past it the search answers in its own order and says so. */
  @Transform(int)
  @IsInt()
  @Min(1)
  RERANK_TIMEOUT_MS = 10_000;

  /**
   * Worker threads of the local embedder; default: one per core.
   * @default one per core
   */
  @Transform(int)
  @IsInt()
  @Min(1)
  @Max(64)
  EMBEDDING_THREADS = Math.max(1, cpus().length);

  /**
   * Processes that run workflow runs and ingestion (APP_ROLE=all): this one, which also serves the
   * API, and WORKERS-1 worker processes it starts and supervises, sharing its store and queue.
   * Above 1, files are ingested by the worker processes only. 1 keeps everything in this process
   * (see docs/operations.md, Every core on one machine).
   * @default one per core
   */
  @Transform(int)
  @IsInt()
  @Min(1)
  @Max(256)
  WORKERS = Math.max(1, availableParallelism());

  /**
   * Niceness the worker processes WORKERS starts run at above this process's own (at most 19), so
   * that the kernel gives the API the core first when both have work: /health answers sooner while
   * files are ingested, but fewer runs complete per second. 0 runs them at this process's (see
   * docs/operations.md, Every core on one machine).
   */
  @Transform(int)
  @IsInt()
  @Min(0)
  @Max(19)
  WORKERS_NICE = 0;

  /**
   * Jobs one process works on at once, per job name, plus as many again for jobs of users with
   * nothing else queued or running (the fair-share lane: see docs/operations.md, Fair shares). On
   * the embedded queue, a process runs one workflow run more for each of its callers waiting on a
   * run's end (`?wait=`, chat, MCP tool calls), up to three times this many more, the first process
   * beside worker processes too (docs/operations.md, What one run costs).
   */
  @Transform(int)
  @IsInt()
  @Min(1)
  @Max(256)
  JOB_CONCURRENCY = 4;

  /**
   * Workflow runs a worker process (APP_ROLE=worker, and the worker processes WORKERS starts) works
   * on at once, in place of JOB_CONCURRENCY, plus as many again in the fair-share lane. Higher, as
   * no API shares its event loop: the writes of the runs it holds share its store commits, which
   * with 4 cost a worker half as much CPU again per run (docs/operations.md, Every core on one machine).
   */
  @Transform(int)
  @IsInt()
  @Min(1)
  @Max(256)
  WORKER_JOB_CONCURRENCY = 16;

  /** Large files (`file.ingest.large`) one process ingests at once, beside JOB_CONCURRENCY small ones; 0 leaves them to other worker processes. */
  @Transform(int)
  @IsInt()
  @Min(0)
  @Max(64)
  INGEST_LARGE_CONCURRENCY = 1;

  /** A file of more bytes than this is ingested in the large-file lane. */
  @Transform(int)
  @IsInt()
  @Min(1)
  INGEST_LARGE_BYTES = 20 * 1024 * 1024;

  /** A PDF of more pages than this is ingested in the large-file lane. */
  @Transform(int)
  @IsInt()
  @Min(1)
  INGEST_LARGE_PAGES = 500;

  /** Redis key prefix of the Bull queues, so several deployments can share one Redis. */
  @IsString()
  @Matches(/^[A-Za-z0-9:_-]{1,64}$/, { message: 'must be 1-64 letters, digits, colons, dashes or underscores' })
  QUEUE_PREFIX = 'jobs';

  /** How long a worker holds a job before another may take it over (crashed worker recovery time). */
  @Transform(int)
  @IsInt()
  @Min(1000)
  JOB_LEASE_MS = 30_000;

  /** Extra folders scanned for node plugins, besides ./plugins. */
  @Transform(list)
  @IsString({ each: true })
  PLUGIN_PATHS: string[] = [];

  /**
   * 32-byte key (base64 or 64 hex characters) for secret variables; generated into DATA_DIR if unset.
   * @default generated into DATA_DIR
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  SECRETS_KEY?: string;

  /**
   * Origins allowed to call the MCP endpoints from a browser; requests without Origin are allowed. On a
   * loopback HOST, `http://localhost:*`, `http://127.0.0.1:*` and `http://[::1]:*` are allowed too.
   */
  @Transform(list)
  @IsString({ each: true })
  MCP_ALLOWED_ORIGINS: string[] = [];

  /** An MCP session without requests for this long expires. */
  @Transform(int)
  @IsInt()
  @Min(1000)
  MCP_SESSION_IDLE_MS = 30 * 60 * 1000;

  /**
   * How long an MCP tool call of a workflow without a progress token waits for its run before
   * answering that it still runs. Below the 60 s after which MCP clients (the SDK's default) give up
   * on a request themselves, so the caller hears which run it started rather than a bare timeout. A
   * call with a progress token waits for the end, reporting progress (clients reset their timeout on it).
   */
  @Transform(int)
  @IsInt()
  @Min(1000)
  @Max(15 * 60 * 1000)
  MCP_TOOL_TIMEOUT_MS = 50_000;

  /** Open MCP sessions per user; opening one more ends that user's least recently active session. */
  @Transform(int)
  @IsInt()
  @Min(1)
  MCP_MAX_SESSIONS_PER_USER = 100;

  /**
   * OAuth 2.1 for remote MCP clients (docs/mcp.md): the authorization server under /oauth, the
   * consent page in the console, access tokens accepted on /mcp and /sse beside API keys. Its
   * issuer is PUBLIC_URL, which must be the address clients reach.
   */
  @Transform(bool)
  @IsBoolean()
  OAUTH_ENABLED = true;

  /** Lifetime of an OAuth access token; a client refreshes it with its refresh token. */
  @Transform(int)
  @IsInt()
  @Min(60)
  @Max(24 * 60 * 60)
  OAUTH_ACCESS_TOKEN_TTL_SECONDS = 60 * 60;

  /** Lifetime of an OAuth refresh token and of the grant behind it: a connection unused this long must be authorized again. */
  @Transform(int)
  @IsInt()
  @Min(60 * 60)
  OAUTH_REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;

  /** Requests one client address may make to the authorization server's endpoints (/oauth/*) a minute; 0 for no limit. */
  @Transform(int)
  @IsInt()
  @Min(0)
  OAUTH_REQUESTS_PER_MINUTE = 300;

  /** Dynamic client registrations one client address may make an hour (each is a stored client); 0 for no limit. */
  @Transform(int)
  @IsInt()
  @Min(0)
  OAUTH_REGISTRATIONS_PER_HOUR = 20;

  /** OpenAI-compatible chat completions endpoint for the AI Decide parameter mode. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\//, { message: 'must be an http(s) URL' })
  LLM_URL?: string;

  /** Bearer key for LLM_URL. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  LLM_API_KEY?: string;

  /** Model name sent to LLM_URL (AI Decide, and AI Agent and Chat Completion nodes that name none). */
  @IsString()
  LLM_MODEL = 'gpt-4o-mini';

  /** CPU time of one expression or Code node evaluation; the wall-clock backstop is 10 times it plus 5 s. */
  @Transform(int)
  @IsInt()
  @Min(1)
  EXPRESSION_TIMEOUT_MS = 1000;

  /** Heap of one sandbox isolate. */
  @Transform(int)
  @IsInt()
  @Min(8)
  EXPRESSION_MEMORY_MB = 32;

  /** Sandbox processes evaluating expressions and Code nodes, besides one more kept for a user with no evaluation running or waiting when these are busy. */
  @Transform(int)
  @IsInt()
  @Min(1)
  @Max(64)
  EXPRESSION_POOL_SIZE = 2;

  /** Longest a workflow run may take. */
  @Transform(int)
  @IsInt()
  @Min(1000)
  RUN_TIMEOUT_MS = 15 * 60 * 1000;

  /** Finished runs older than this many days are deleted with their steps and sealed state; 0 keeps them. */
  @Transform(int)
  @IsInt()
  @Min(0)
  @Max(36_500)
  RUNS_RETENTION_DAYS = 30;

  /** Each workflow keeps at most this many finished runs, newest first; 0 for no limit. */
  @Transform(int)
  @IsInt()
  @Min(0)
  RUNS_MAX_PER_WORKFLOW = 10_000;

  /**
   * Admission control: queued runs of all workflows together beyond which a caller's run (webhook,
   * REST, MCP tool) is refused with 503 and Retry-After instead of joining a backlog; 0 for no limit.
   */
  @Transform(int)
  @IsInt()
  @Min(0)
  RUNS_MAX_QUEUED = 5_000;

  /**
   * Queued runs of one workflow beyond which its callers get 429 and Retry-After; 0 for no limit.
   * A workflow's settings.maxQueuedRuns can lower it, never raise it.
   */
  @Transform(int)
  @IsInt()
  @Min(0)
  RUNS_MAX_QUEUED_PER_WORKFLOW = 1_000;

  /**
   * A user's share of RUNS_MAX_QUEUED: queued runs acting as one user (all their workflows
   * together) beyond which that user's callers get 429 and Retry-After, so one user meets their own
   * limit before the service refuses anyone else; 0 for no limit.
   */
  @Transform(int)
  @IsInt()
  @Min(0)
  RUNS_MAX_QUEUED_PER_USER = 1_000;

  /**
   * How long a caller's run waits for the queue to take its job: beyond it (Redis unreachable) the
   * run is withdrawn and the caller answered 503, so the webhook answers within 2 s.
   */
  @Transform(int)
  @IsInt()
  @Min(100)
  @Max(60_000)
  RUNS_ENQUEUE_TIMEOUT_MS = 1_500;

  /**
   * The longest a caller refused by a queued-run limit waits to hear so: the refusal is held half
   * the age of the oldest queued run it met, at least 0.1 s and at most this long (so never past its
   * Retry-After): a client that retries at once, ignoring Retry-After, would otherwise spend on refusals the CPU
   * the workers need to shorten the queue (docs/operations.md, Backpressure). 0 answers at once.
   */
  @Transform(int)
  @IsInt()
  @Min(0)
  @Max(10_000)
  RUNS_REFUSAL_DELAY_MS = 1_000;

  /** Serve the OpenAPI UI at /docs and the document at /docs/json. */
  @Transform(bool)
  @IsBoolean()
  SWAGGER_ENABLED = true;

  /** Serve Prometheus metrics: /metrics on the HTTP port, and on WORKER_HEALTH_PORT in a worker. */
  @Transform(bool)
  @IsBoolean()
  METRICS_ENABLED = true;

  /**
   * A worker process (APP_ROLE=worker) answers /health, /health/ready and /metrics here; 0 turns it
   * off. Two workers on one machine need two ports (the second stops at boot naming this variable);
   * the worker processes WORKERS starts have none.
   */
  @Transform(int)
  @IsInt()
  @Min(0)
  @Max(65535)
  WORKER_HEALTH_PORT = 3001;
}
