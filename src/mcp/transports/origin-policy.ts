import { validateHostHeader } from '@modelcontextprotocol/server';
import type { ServerResponse } from 'node:http';

const ALLOWED_HEADERS = 'Authorization, X-Api-Key, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID';
const EXPOSED_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate';

const normalize = (origin: string): string => origin.trim().toLowerCase().replace(/\/+$/, '');

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
/** URL.hostname spells IPv6 in brackets. */
const LOOPBACK_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** `http://localhost:*`, `http://127.0.0.1:*` or `http://[::1]:*`: a page served from this machine. */
function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin.trim());
    return url.protocol === 'http:' && LOOPBACK_HOSTNAMES.has(url.hostname) && url.pathname === '/' && !url.username && !url.password;
  } catch {
    return false;
  }
}

/**
 * The Origin rule of the MCP transports specification, against DNS rebinding: a request that
 * carries an Origin must come from a configured one (MCP_ALLOWED_ORIGINS); a request without one is
 * not from a browser page and is allowed. A service that listens on loopback only (HOST 127.0.0.1,
 * localhost or ::1) can be reached by pages of this machine alone, so it also allows their origins
 * (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`; the MCP conformance scenario
 * dns-rebinding-protection expects a local server to accept them), while a rebinding page still
 * shows its own origin and is refused. Allowed browser origins also get the CORS headers they need.
 */
export class OriginPolicy {
  private readonly allowed: ReadonlySet<string>;
  /** The service listens on loopback only. */
  readonly loopback: boolean;

  constructor(origins: readonly string[], listenHost?: string) {
    this.allowed = new Set(origins.map(normalize));
    this.loopback = listenHost !== undefined && LOOPBACK_HOSTS.has(listenHost.trim().toLowerCase());
  }

  allows(origin: string | undefined): boolean {
    return origin === undefined || this.allowed.has(normalize(origin)) || (this.loopback && isLoopbackOrigin(origin));
  }

  /** Sets the CORS response headers for an allowed browser origin; nothing for non-browser callers. */
  applyCors(origin: string | undefined, response: ServerResponse, preflight = false): void {
    if (origin === undefined) return;
    response.setHeader('access-control-allow-origin', origin);
    response.setHeader('vary', 'Origin');
    response.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    if (preflight) {
      response.setHeader('access-control-allow-methods', 'GET, POST, DELETE');
      response.setHeader('access-control-allow-headers', ALLOWED_HEADERS);
      response.setHeader('access-control-max-age', '600');
    }
  }
}

/** At most this many distinct Host values are remembered as passing (a client sends one or two). */
const REMEMBERED_HOSTS = 64;

/**
 * The Host rule of a service listening on loopback, against DNS rebinding: a rebinding page reaches
 * this machine under its own host name, so only this machine's names (and the public URL's) pass,
 * whatever the port. The SDK's own check decides; a Host value that passed once is remembered, so
 * the rule costs a lookup per request rather than a URL parse.
 */
export class HostRule {
  private readonly passed = new Set<string>();

  constructor(private readonly allowedHostnames: string[]) {}

  /** Why the request's Host is refused, or undefined when it passes. */
  refusal(host: string | undefined): string | undefined {
    if (host !== undefined && this.passed.has(host)) return undefined;
    const result = validateHostHeader(host, this.allowedHostnames);
    if (!result.ok) return result.message;
    if (host !== undefined && this.passed.size < REMEMBERED_HOSTS) this.passed.add(host);
    return undefined;
  }
}
