import { AppError, ErrorCode } from '../common/app-error';
import type { SafeFetch } from '../common/safe-fetch';
import type { AppliedCredential, OutgoingRequest, ResolvedCredential } from '../engine/node-credentials.port';
import type { Credential } from '../domain/credential.model';
import { Redactor } from '../engine/redactor';

/** A fetched token is used until this long before it expires. */
const TOKEN_MARGIN_MS = 60_000;
/** A token without `expires_in` is kept this long. */
const DEFAULT_TOKEN_TTL_MS = 5 * 60_000;
const TOKEN_TIMEOUT_MS = 15_000;
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

interface CachedToken {
  accessToken: string;
  expiresAt: number;
}

/**
 * Access tokens of OAuth2 client-credentials credentials, per process, by credential and version
 * (its last update): a rotated secret never reuses a token fetched with the old one.
 */
export class OAuth2Tokens {
  private readonly cache = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<CachedToken>>();

  constructor(private readonly fetcher: Pick<SafeFetch, 'fetch'>) {}

  async token(credential: Credential, secrets: Record<string, string>, signal?: AbortSignal): Promise<string> {
    const key = `${credential.id}@${credential.updatedAt.getTime()}`;
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt - TOKEN_MARGIN_MS > Date.now()) return cached.accessToken;
    let fetching = this.pending.get(key);
    if (!fetching) {
      fetching = this.fetchToken(credential, secrets, signal).finally(() => this.pending.delete(key));
      this.pending.set(key, fetching);
    }
    const token = await fetching;
    for (const old of this.cache.keys()) if (old.startsWith(`${credential.id}@`)) this.cache.delete(old);
    this.cache.set(key, token);
    return token.accessToken;
  }

  forget(credential: Credential): void {
    this.cache.delete(`${credential.id}@${credential.updatedAt.getTime()}`);
  }

  /** The client-credentials grant (RFC 6749, 4.4), the client authenticated in the body. */
  private async fetchToken(credential: Credential, secrets: Record<string, string>, signal?: AbortSignal): Promise<CachedToken> {
    const { tokenUrl, clientId, scope, audience } = credential.settings;
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secrets.clientSecret });
    if (scope) form.set('scope', scope);
    if (audience) form.set('audience', audience);
    const response = await this.fetcher.fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal,
      timeoutMs: TOKEN_TIMEOUT_MS,
      maxBytes: MAX_TOKEN_RESPONSE_BYTES,
      followRedirects: false,
    });
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      body = JSON.parse(response.body.toString('utf8')) as typeof body;
    } catch {
      // Said below, without the body: it may echo what was sent.
    }
    if (response.status !== 200 || typeof body.access_token !== 'string' || !body.access_token) {
      // The endpoint's own words may echo what it was sent: the client secret, in any of its forms.
      const masked = new Redactor(wireForms(secrets.clientSecret));
      const said =
        typeof body.error === 'string'
          ? masked.string(
              `: ${body.error}${typeof body.error_description === 'string' ? ` (${body.error_description.slice(0, 200)})` : ''}`,
            )
          : '';
      throw new AppError(
        ErrorCode.UPSTREAM_FAILED,
        `The token endpoint of credential ${credential.id} answered ${response.status}${said}`,
        {
          details: { credentialId: credential.id, status: response.status },
          retryable: response.status >= 500 || response.status === 429,
        },
      );
    }
    const ttl = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : DEFAULT_TOKEN_TTL_MS;
    return { accessToken: body.access_token, expiresAt: Date.now() + ttl };
  }
}

const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;

/**
 * Every form a value takes where the service itself puts it or echoes it: as it is, URL-encoded
 * (a query value: `~` stays, a space is `%20`), and form-encoded (URLSearchParams: `~` is `%7E`, a
 * space `+`); what is masked in records is each of these.
 */
export function wireForms(...values: string[]): string[] {
  const forms = values.flatMap((value) => [value, encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2)]);
  return [...new Set(forms.filter((form) => form.length > 0))];
}

/**
 * A stored credential, opened, as a node injects it: the values go into the request at send time
 * and nowhere else; `secrets` lists every form they take on the wire, for the run's masks.
 * `guard` sees each request's URL before anything is applied, and refuses a host the credential
 * may not be sent to.
 */
export function resolvedCredential(
  credential: Credential,
  secrets: Record<string, string>,
  tokens: OAuth2Tokens,
  guard: (url: string) => Promise<void> = async () => undefined,
): ResolvedCredential {
  const { settings } = credential;
  const withHeader = (request: OutgoingRequest, name: string, value: string, carried: string[]): AppliedCredential => ({
    url: request.url,
    headers: { ...request.headers, [name]: value },
    sensitiveHeaders: [name],
    secrets: carried,
  });
  switch (credential.type) {
    case 'bearer': {
      const forms = wireForms(secrets.token, `Bearer ${secrets.token}`);
      return {
        id: credential.id,
        type: credential.type,
        secrets: forms,
        refused: () => undefined,
        apply: async (request) => {
          await guard(request.url);
          return withHeader(request, 'authorization', `Bearer ${secrets.token}`, forms);
        },
      };
    }
    case 'basic': {
      const header = basic(settings.username, secrets.password);
      const forms = wireForms(secrets.password, header, header.slice('Basic '.length));
      return {
        id: credential.id,
        type: credential.type,
        secrets: forms,
        refused: () => undefined,
        apply: async (request) => {
          await guard(request.url);
          return withHeader(request, 'authorization', header, forms);
        },
      };
    }
    case 'header': {
      const name = settings.name.toLowerCase();
      const forms = wireForms(secrets.value);
      return {
        id: credential.id,
        type: credential.type,
        secrets: forms,
        refused: () => undefined,
        apply: async (request) => {
          await guard(request.url);
          return withHeader(request, name, secrets.value, forms);
        },
      };
    }
    case 'query': {
      const forms = wireForms(secrets.value);
      return {
        id: credential.id,
        type: credential.type,
        secrets: forms,
        refused: () => undefined,
        apply: async (request) => {
          await guard(request.url);
          const url = new URL(request.url);
          url.searchParams.set(settings.name, secrets.value);
          return { url: url.href, headers: { ...request.headers }, sensitiveHeaders: [], secrets: forms };
        },
      };
    }
    case 'oauth2-client-credentials':
      return {
        id: credential.id,
        type: credential.type,
        secrets: wireForms(secrets.clientSecret),
        refused: () => tokens.forget(credential),
        apply: async (request, signal) => {
          await guard(request.url);
          const token = await tokens.token(credential, secrets, signal);
          return withHeader(request, 'authorization', `Bearer ${token}`, wireForms(secrets.clientSecret, token, `Bearer ${token}`));
        },
      };
  }
}
