import type { LookupAddress, LookupOptions } from 'node:dns';
import { EventEmitter } from 'node:events';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { AppConfig } from '../config/app-config';
import { AppError, ErrorCode, isAppError } from './app-error';
import { HostAllowList } from './ip-guard';

export { isBlockedAddress } from './ip-guard';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (dns.lookup with `all: true`). */
export type LookupFn = (hostname: string) => Promise<ResolvedAddress[]>;

export interface SafeFetchOptions {
  /** Host names (`*.suffix` allowed), IPs or CIDRs that may be reached although private. */
  allowedHosts: string[];
  connectTimeoutMs: number;
  /** Whole exchange, redirects and body included. */
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  /** Certificate authorities (PEM) trusted beside the public ones. */
  extraCa?: string;
  /** Injectable DNS for tests; defaults to the system resolver. */
  lookup?: LookupFn;
}

export interface SafeRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD';
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
  maxBytes?: number;
  timeoutMs?: number;
  /** Default true. When false a 3xx is returned as it is. */
  followRedirects?: boolean;
  /**
   * Headers that carry a credential or a secret (lower-case names): like Authorization and
   * Cookie, never handed to another origin than the one addressed when a redirect leads there.
   */
  sensitiveHeaders?: readonly string[];
  /** Called with each piece of a 2xx response's body as it arrives (a stream read as it comes); the body is still returned whole. */
  onChunk?: (chunk: Buffer) => void;
}

export interface SafeResponse {
  status: number;
  /** The final URL, after redirects. */
  url: string;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
}

type Method = NonNullable<SafeRequest['method']>;
type ResponseData = Dispatcher.ResponseData;
type NodeLookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** One request of a redirect chain. */
interface Hop {
  url: URL;
  method: Method;
  headers: Record<string, string>;
  body?: string | Buffer;
}

const DEFAULT_MAX_REDIRECTS = 5;
const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Never handed to another origin than the one the caller addressed. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'host'];
/** Describe a body that a redirect turned into a GET no longer has. */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];
/** Failures where trying the same request again later may work. */
const RETRYABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/**
 * The one outbound HTTP client. Refuses private, loopback, link-local, metadata and other
 * non-public addresses (unless FETCH_ALLOWED_HOSTS lists them), checks every address a name
 * resolves to inside the connection itself so DNS cannot be re-bound between check and connect,
 * re-checks every redirect, and enforces timeouts and a byte cap while the body streams.
 */
export class SafeFetch {
  private readonly allowList: HostAllowList;
  private readonly resolve: LookupFn;
  private readonly agent: Agent;
  private readonly connector: buildConnector.connector;

  constructor(private readonly options: SafeFetchOptions) {
    this.allowList = new HostAllowList(options.allowedHosts);
    this.resolve = options.lookup ?? systemLookup;
    this.connector = buildConnector({
      timeout: options.connectTimeoutMs,
      lookup: this.guardedLookup,
      ...(options.extraCa ? { ca: [...rootCertificates, options.extraCa] } : {}),
    });
    this.agent = new Agent({
      connect: this.guardedConnect,
      // The per-call deadline is the single clock; undici's own would fire at 300 s regardless.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  static fromConfig(config: AppConfig): SafeFetch {
    return new SafeFetch({
      allowedHosts: config.FETCH_ALLOWED_HOSTS,
      connectTimeoutMs: config.FETCH_CONNECT_TIMEOUT_MS,
      timeoutMs: config.FETCH_TIMEOUT_MS,
      maxBytes: config.MAX_FILE_BYTES,
      extraCa: config.FETCH_CA_FILE ? readFileSync(config.FETCH_CA_FILE, 'utf8') : undefined,
    });
  }

  /** Resolves with any status, 4xx and 5xx included; rejects only with an AppError. */
  async fetch(url: string, request: SafeRequest = {}): Promise<SafeResponse> {
    const maxBytes = request.maxBytes ?? this.options.maxBytes;
    const maxRedirects = this.options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    const followRedirects = request.followRedirects ?? true;
    let hop = firstHop(url, request);
    const deadline = new Deadline(request.timeoutMs ?? this.options.timeoutMs, request.signal);
    try {
      for (let redirects = 0; ; redirects++) {
        const response = await this.send(hop, deadline.handle);
        const location = followRedirects ? redirectLocation(response, hop.url) : null;
        if (!location) return await readResponse(hop, response, maxBytes, deadline, request.onChunk);
        await response.body.dump();
        if (redirects >= maxRedirects) throw tooManyRedirects(maxRedirects, hop.url);
        hop = redirectHop(hop, response.statusCode, location, request.sensitiveHeaders);
      }
    } catch (err) {
      throw this.toAppError(err, deadline, hop.url.host);
    } finally {
      deadline.dispose();
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private send(hop: Hop, signal: AbortHandle): Promise<ResponseData> {
    assertFetchableScheme(hop.url);
    return this.agent.request({
      origin: hop.url.origin,
      path: hop.url.pathname + hop.url.search,
      method: hop.method,
      headers: hop.headers,
      body: hop.body,
      signal,
    });
  }

  /**
   * Every socket of the agent opens here, so no request can skip the address check. IP literals
   * are judged now (net.connect never resolves them); names in guardedLookup, once resolved.
   */
  private readonly guardedConnect: buildConnector.connector = (options, callback) => {
    const literal = ipLiteral(options.hostname);
    const reason = literal === null ? null : this.allowList.refusal(options.hostname, literal);
    if (reason) callback(blocked(options.host ?? options.hostname, `${literal} is ${reason}${ALLOW_HINT}`), null);
    else this.connector(options, callback);
  };

  /**
   * Runs inside net.connect, so the socket goes to exactly the addresses checked here. Every address
   * must pass: a name resolving to one public and one private address would otherwise let the
   * connection fall through to the private one.
   */
  private readonly guardedLookup = (hostname: string, options: LookupOptions, callback: NodeLookupCallback): void => {
    this.checkedAddresses(hostname).then(
      // The agent never pins a family, so the only difference between calls is the answer's shape.
      (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family)),
      (err: AppError) => callback(err, ''),
    );
  };

  private async checkedAddresses(hostname: string): Promise<LookupAddress[]> {
    const addresses = await this.resolveHost(hostname);
    for (const { address } of addresses) {
      const reason = this.allowList.refusal(hostname, address);
      if (reason) throw blocked(hostname, `it resolves to ${address}, which is ${reason}${ALLOW_HINT}`);
    }
    return addresses.map(({ address, family }) => ({ address, family }));
  }

  private async resolveHost(hostname: string): Promise<ResolvedAddress[]> {
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolve(hostname);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      throw new AppError(ErrorCode.FETCH_FAILED, `DNS lookup of ${hostname} failed (${code})`, { retryable: true, cause: err });
    }
    if (addresses.length === 0) {
      throw new AppError(ErrorCode.FETCH_FAILED, `DNS lookup of ${hostname} returned no address`, { retryable: true });
    }
    return addresses;
  }

  private toAppError(err: unknown, deadline: Deadline, host: string): AppError {
    const expired = deadline.failure(host);
    if (expired) return expired;
    if (isAppError(err)) return err;
    const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
    if (code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new AppError(ErrorCode.TIMEOUT, `Connecting to ${host} timed out after ${this.options.connectTimeoutMs} ms`, {
        retryable: true,
        cause: err,
      });
    }
    const message = err instanceof Error ? err.message : String(err);
    return new AppError(ErrorCode.FETCH_FAILED, `Request to ${host} failed: ${message}`, {
      retryable: RETRYABLE_CODES.has(code),
      cause: err,
    });
  }
}

/**
 * What cancels undici's request: undici takes an EventEmitter with `aborted` and `reason` as well
 * as an AbortSignal. Making an AbortController cost 5-6 µs of CPU on Node 20 (in a loop), and the
 * signal's listeners (EventTarget) more than an emitter's, on every outbound call.
 */
class AbortHandle extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/** One clock and one cancel switch for a whole fetch, redirects and body included. */
class Deadline {
  readonly handle = new AbortHandle();
  private readonly timer: NodeJS.Timeout;
  private outcome: 'timeout' | 'canceled' | null = null;

  constructor(
    private readonly timeoutMs: number,
    private readonly callerSignal?: AbortSignal,
  ) {
    this.timer = setTimeout(() => this.end('timeout'), timeoutMs);
    callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    if (callerSignal?.aborted) this.end('canceled');
  }

  /** The error that ended the fetch, if the deadline or the caller ended it. */
  failure(host: string): AppError | null {
    if (this.outcome === 'timeout') {
      return new AppError(ErrorCode.TIMEOUT, `Request to ${host} timed out after ${this.timeoutMs} ms`, { retryable: true });
    }
    if (this.outcome === 'canceled') return new AppError(ErrorCode.CANCELED, `Request to ${host} was canceled`);
    return null;
  }

  /** Throws when the deadline or the caller ended the fetch (failure() then says which). */
  throwIfEnded(): void {
    if (this.handle.aborted) throw this.handle.reason;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private readonly onCallerAbort = (): void => this.end('canceled');

  private end(outcome: 'timeout' | 'canceled'): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.handle.abort(new Error(outcome === 'timeout' ? `timed out after ${this.timeoutMs} ms` : 'canceled'));
  }
}

function systemLookup(hostname: string): Promise<ResolvedAddress[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}

function assertFetchableScheme(url: URL): void {
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) {
    throw blocked(url.host || url.protocol, `only http: and https: URLs may be fetched, not ${url.protocol}`);
  }
}

function firstHop(url: string, request: SafeRequest): Hop {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw blocked('(invalid URL)', 'the URL cannot be parsed');
  }
  return {
    url: parsed,
    method: request.method ?? 'GET',
    headers: lowerCaseNames(request.headers ?? {}),
    body: request.body,
  };
}

function lowerCaseNames(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** The address a host names directly, if it is an IP literal (undici strips IPv6 brackets; be sure). */
function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

/** Null when the response is not a redirect, or its Location cannot be used (then it is returned as is). */
function redirectLocation(response: ResponseData, current: URL): URL | null {
  if (!REDIRECT_STATUSES.has(response.statusCode)) return null;
  const location = response.headers.location;
  if (typeof location !== 'string') return null;
  try {
    return new URL(location, current);
  } catch {
    return null;
  }
}

/** Method and header rewriting as the Fetch standard does it (curl and browsers agree). */
function redirectHop(hop: Hop, status: number, location: URL, sensitiveHeaders: readonly string[] = []): Hop {
  const toGet = status === 303 ? hop.method !== 'HEAD' : (status === 301 || status === 302) && hop.method === 'POST';
  const dropped = [
    ...(toGet ? BODY_HEADERS : []),
    ...(location.origin !== hop.url.origin ? [...CREDENTIAL_HEADERS, ...sensitiveHeaders.map((name) => name.toLowerCase())] : []),
  ];
  const headers = Object.fromEntries(Object.entries(hop.headers).filter(([name]) => !dropped.includes(name)));
  return { url: location, method: toGet ? 'GET' : hop.method, headers, body: toGet ? undefined : hop.body };
}

async function readResponse(
  hop: Hop,
  response: ResponseData,
  maxBytes: number,
  deadline: Deadline,
  onChunk?: (chunk: Buffer) => void,
): Promise<SafeResponse> {
  const host = hop.url.host;
  if (hop.method !== 'HEAD' && Number(response.headers['content-length']) > maxBytes) {
    discard(response.body);
    throw tooLarge(host, maxBytes);
  }
  return {
    status: response.statusCode,
    url: hop.url.href,
    headers: flattenHeaders(response.headers),
    body: await readCapped(
      response.body,
      maxBytes,
      host,
      deadline,
      response.statusCode >= 200 && response.statusCode < 300 ? onChunk : undefined,
    ),
  };
}

/** Drops the connection rather than read a body nobody wants; undici reports that as an error event. */
function discard(body: ResponseData['body']): void {
  body.on('error', () => undefined).destroy();
}

/** Stops reading (and drops the connection) at the first chunk past the cap. */
async function readCapped(
  body: ResponseData['body'],
  maxBytes: number,
  host: string,
  deadline: Deadline,
  onChunk?: (chunk: Buffer) => void,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) throw tooLarge(host, maxBytes);
    chunks.push(chunk);
    onChunk?.(chunk);
  }
  // A stream destroyed by the deadline may end quietly rather than throw.
  deadline.throwIfEnded();
  return Buffer.concat(chunks, total);
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/** What the operator can do about a refused private address. */
const ALLOW_HINT = ' (the service operator can allow it with FETCH_ALLOWED_HOSTS)';

function blocked(host: string, reason: string): AppError {
  return new AppError(ErrorCode.FETCH_BLOCKED, `Refused to fetch from ${host}: ${reason}`, { details: { host, reason } });
}

function tooManyRedirects(maxRedirects: number, last: URL): AppError {
  return blocked(last.host, `more than ${maxRedirects} redirects`);
}

function tooLarge(host: string, maxBytes: number): AppError {
  return new AppError(ErrorCode.FILE_TOO_LARGE, `Response from ${host} exceeds the limit of ${maxBytes} bytes`, {
    details: { host, maxBytes },
  });
}
