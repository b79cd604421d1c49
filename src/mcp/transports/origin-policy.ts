import type { ServerResponse } from 'node:http';

const ALLOWED_HEADERS = 'Authorization, X-Api-Key, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID';
const EXPOSED_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate';

const normalize = (origin: string): string => origin.trim().toLowerCase().replace(/\/+$/, '');

/**
 * The Origin rule of the MCP transports specification, against DNS rebinding: a request that
 * carries an Origin must come from a configured one (MCP_ALLOWED_ORIGINS); a request without one is
 * not from a browser page and is allowed. Allowed browser origins also get the CORS headers they need.
 */
export class OriginPolicy {
  private readonly allowed: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.allowed = new Set(origins.map(normalize));
  }

  allows(origin: string | undefined): boolean {
    return origin === undefined || this.allowed.has(normalize(origin));
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
