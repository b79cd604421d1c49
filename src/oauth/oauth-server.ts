import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { createPrivateKey } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import { ApiKeyService, presentedKey } from '../auth/api-key.service';
import { Principal } from '../auth/principal';
import { CollectionsService } from '../collections/collections.service';
import { AppError, ErrorCode, isAppError } from '../common/app-error';
import { sendError } from '../common/http-error.filter';
import { rawRoute } from '../common/raw-route';
import { ROOT_LOGGER } from '../common/logger';
import { SafeFetch } from '../common/safe-fetch';
import { SecretCipher } from '../common/secret-cipher';
import { AppConfig } from '../config/app-config';
import { OAuthStore } from '../domain/oauth-store.port';
import { RateLimiter } from '../domain/rate-limiter.port';
import { UserStore } from '../domain/user-store.port';
import { WorkflowToolsService } from '../workflows/workflow-tools.service';
import { SCOPE_DESCRIPTIONS, SUPPORTED_SCOPES, tokenScopes } from './oauth-scopes';
import { hashOf, ProviderAdapter } from './provider-adapter';

/** The authorization server's own endpoints. */
const OAUTH_PATH = '/oauth';
/** The consent page of an authorization request (a page of the web console); its JSON beside it. */
const CONSENT_PATH = '/console/oauth';
/** Principal.keyId of a caller with an OAuth access token: this, then the token's hash. */
export const OAUTH_KEY_PREFIX = 'oauth:';
/** What the consent of a grant chose (collections, workflows) is kept beside the grant, and goes with it. */
const CONSENT_KIND = 'Consent';
/** At most this many collections or workflows may be chosen on one consent. */
const MAX_CHOSEN = 100;
/** A client's metadata document (CIMD) is a small JSON file. */
const CLIENT_DOCUMENT_MAX_BYTES = 16 * 1024;
const CLIENT_DOCUMENT_TIMEOUT_MS = 5000;

/** The MCP doors a token can be for, by their path: each is a protected resource (RFC 9728) of its own. */
export const PROTECTED_PATHS = ['/mcp', '/sse'] as const;
export type ProtectedPath = (typeof PROTECTED_PATHS)[number];

/** Whom an OAuth access token acts for, and what it may do. */
export interface OAuthCaller {
  principal: Principal;
  scopes: string[];
}

interface ChosenOnConsent {
  collections?: string[];
  workflows?: string[];
}

/** Ed25519 private key (PKCS#8 DER) from a 32-byte seed: the signing key is derived from the service's secret, so it survives restarts. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * OAuth 2.1 for remote MCP clients: an authorization server built on oidc-provider (authorization
 * code with PKCE S256 only, dynamic client registration, Client ID Metadata Documents fetched
 * through SafeFetch, refresh tokens, revocation, RFC 8707 resource indicators), whose state lives
 * in the service's store; the Protected Resource Metadata of the MCP endpoints (RFC 9728); the
 * consent a user gives on the console's consent page, signed in with an API key; and the check
 * of the access tokens presented to the MCP endpoints.
 */
@Injectable()
export class OAuthServer implements OnModuleInit {
  readonly issuer: string;
  private readonly logger: Logger;
  private readonly revocations = new EventEmitter().setMaxListeners(0);
  private provider?: Promise<Provider>;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly store: OAuthStore,
    private readonly users: UserStore,
    private readonly apiKeys: ApiKeyService,
    private readonly collections: CollectionsService,
    private readonly workflowTools: WorkflowToolsService,
    private readonly fetcher: SafeFetch,
    private readonly cipher: SecretCipher,
    private readonly config: AppConfig,
    private readonly limiter: RateLimiter,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.issuer = config.publicUrl;
    this.logger = logger.child({ component: 'oauth' });
  }

  /** The resource identifier (RFC 8707) of an MCP door: what its tokens are bound to. */
  resourceOf(path: ProtectedPath): string {
    return this.issuer + path;
  }

  /** Where a client reads the metadata of the resource at `path` (RFC 9728, path-suffixed form). */
  metadataUrlOf(path: ProtectedPath): string {
    return `${this.issuer}/.well-known/oauth-protected-resource${path}`;
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify || !this.config.OAUTH_ENABLED) return;
    this.provider = this.createProvider();
    // A provider that cannot start leaves the MCP endpoints to API keys; the failure is said once here and on every OAuth request.
    this.provider.catch((error: unknown) => this.logger.error({ err: error }, 'the OAuth authorization server did not start'));
    void fastify.register(async (scope) => this.registerRoutes(scope));
  }

  get enabled(): boolean {
    return this.provider !== undefined;
  }

  /**
   * The caller behind an access token presented to the MCP door at `path`.
   * @throws AppError UNAUTHENTICATED: unknown, expired or revoked, or issued for another resource
   */
  async verify(token: string, path: ProtectedPath): Promise<OAuthCaller> {
    // An authorization server that did not start vouches for no token (its failure is logged once).
    const provider = await this.provider?.catch(() => undefined);
    if (!provider) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Invalid API key or access token');
    const accessToken = await provider.AccessToken.find(token);
    if (!accessToken?.accountId) throw new AppError(ErrorCode.UNAUTHENTICATED, 'Invalid, expired or revoked access token');
    const audiences = Array.isArray(accessToken.aud) ? accessToken.aud : [accessToken.aud];
    if (!audiences.includes(this.resourceOf(path))) {
      throw new AppError(ErrorCode.UNAUTHENTICATED, `The access token was issued for another resource than ${this.resourceOf(path)}`);
    }
    const user = await this.users.getUser(accessToken.accountId);
    if (!user) throw new AppError(ErrorCode.UNAUTHENTICATED, 'The user of this access token no longer exists');
    const chosen = (accessToken.extra?.chosen ?? {}) as ChosenOnConsent;
    return {
      principal: { userId: user.id, keyId: OAUTH_KEY_PREFIX + hashOf(token), isAdmin: user.isAdmin },
      scopes: tokenScopes(accessToken.scope ?? '', chosen),
    };
  }

  /** Whether the access token behind an `oauth:` key id is still live (not revoked nor expired, its user still there). */
  async isStillValid(keyId: string): Promise<boolean> {
    const record = await this.store.find('AccessToken', keyId.slice(OAUTH_KEY_PREFIX.length), new Date());
    if (!record) return false;
    const { accountId } = JSON.parse(record.payload) as { accountId?: string };
    return accountId !== undefined && (await this.users.getUser(accountId)) !== null;
  }

  /** Calls `listener` with the key id of each access token this process revokes, as it does; returns the unsubscribe. */
  onRevoked(listener: (keyId: string) => void): () => void {
    this.revocations.on('revoked', listener);
    return () => this.revocations.off('revoked', listener);
  }

  private async createProvider(): Promise<Provider> {
    // oidc-provider 9 is an ES module: loaded by import() (Node 20.19+ also lets the compiled require() take it).
    const { default: OidcProvider, errors } = await import('oidc-provider');
    const resources = new Set(PROTECTED_PATHS.map((path) => this.resourceOf(path)));
    const signingKey = createPrivateKey({
      key: Buffer.concat([ED25519_PKCS8_PREFIX, this.cipher.deriveKey('oauth-signing-key')]),
      format: 'der',
      type: 'pkcs8',
    }).export({ format: 'jwk' });
    const provider = new OidcProvider(this.issuer, {
      adapter: (kind: string) =>
        new ProviderAdapter(kind, this.store, (destroyed, idHash) => {
          if (destroyed === 'AccessToken') this.revocations.emit('revoked', OAUTH_KEY_PREFIX + idHash);
        }),
      findAccount: async (_ctx: unknown, sub: string) =>
        (await this.users.getUser(sub)) ? { accountId: sub, claims: async () => ({ sub }) } : undefined,
      jwks: { keys: [{ ...signingKey, alg: 'EdDSA', use: 'sig', kid: hashOf(String(signingKey.x)).slice(0, 16) }] },
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        id_token_signed_response_alg: 'EdDSA',
      },
      cookies: { keys: [this.cipher.deriveKey('oauth-cookies').toString('base64url')] },
      // Remote MCP clients run in browsers too (the page of an AI assistant): its token endpoint answers any origin, as the specification expects.
      clientBasedCORS: () => true,
      routes: {
        authorization: `${OAUTH_PATH}/authorize`,
        token: `${OAUTH_PATH}/token`,
        registration: `${OAUTH_PATH}/register`,
        revocation: `${OAUTH_PATH}/revoke`,
        jwks: `${OAUTH_PATH}/jwks`,
        userinfo: `${OAUTH_PATH}/userinfo`,
        end_session: `${OAUTH_PATH}/logout`,
      },
      responseTypes: ['code'],
      pkce: { required: () => true },
      scopes: ['openid', 'offline_access'],
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        resourceIndicators: {
          enabled: true,
          // A client that names no resource gets a token for /mcp, where nearly all clients connect.
          defaultResource: () => this.resourceOf('/mcp'),
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => {
            if (!resources.has(resource))
              throw new errors.InvalidTarget(`this server issues tokens for ${[...resources].join(' and ')} only`);
            return {
              scope: SUPPORTED_SCOPES.join(' '),
              audience: resource,
              accessTokenFormat: 'opaque',
              accessTokenTTL: this.config.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
            };
          },
        },
        clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      },
      // The client's metadata document is fetched through the service's one guarded client (private addresses refused).
      fetch: (url: string, options: { headers?: Headers }) => this.fetchClientDocument(url, options),
      fetchResponseBodyLimits: { 'client_id metadata document': CLIENT_DOCUMENT_MAX_BYTES },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `${CONSENT_PATH}/${interaction.uid}` },
      // Every client may refresh: MCP clients do not all ask for offline_access, and a connection should outlive an hour.
      issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
        client.grantTypeAllowed('refresh_token'),
      expiresWithSession: async () => false,
      // What the user chose on the consent page travels in every access token of the grant, refreshed ones included.
      extraTokenClaims: async (_ctx: unknown, token: { grantId?: string }) => {
        if (!token.grantId) return undefined;
        const consent = await this.store.find(CONSENT_KIND, hashOf(token.grantId), new Date());
        return consent ? { chosen: JSON.parse(consent.payload) as ChosenOnConsent } : undefined;
      },
      ttl: {
        AccessToken: () => this.config.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
        RefreshToken: () => this.config.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
        Grant: () => this.config.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
        Session: () => this.config.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
        AuthorizationCode: 60,
        Interaction: 60 * 60,
      },
      renderError: async (ctx: { type: string; body: unknown }, out: Record<string, string>) => {
        ctx.type = 'application/json; charset=utf-8';
        ctx.body = out;
      },
    });
    // Behind a TLS-terminating proxy (an https PUBLIC_URL on a plain HTTP listener) the proxy's forwarded protocol is believed.
    provider.proxy = this.issuer.startsWith('https:');
    provider.on('server_error', (_ctx: unknown, error: unknown) => this.logger.error({ err: error }, 'OAuth request failed'));
    return provider;
  }

  private async fetchClientDocument(url: string, options: { headers?: Headers }): Promise<Response> {
    const headers: Record<string, string> = {};
    options.headers?.forEach((value, name) => {
      if (value) headers[name] = value;
    });
    const answer = await this.fetcher.fetch(url, {
      headers,
      followRedirects: false,
      maxBytes: CLIENT_DOCUMENT_MAX_BYTES,
      timeoutMs: CLIENT_DOCUMENT_TIMEOUT_MS,
    });
    return new Response(answer.status === 204 || answer.status === 304 ? null : new Uint8Array(answer.body), {
      status: answer.status,
      headers: answer.headers,
    });
  }

  private registerRoutes(scope: FastifyInstance): void {
    // The authorization server's endpoints are oidc-provider's, answered on the raw Node request before fastify reads a body.
    const toProvider = (method: HTTPMethods, url: string, rewrite?: string) =>
      rawRoute(scope, method, url, (request, response) => {
        if (rewrite) request.raw.url = rewrite;
        this.callProvider(request, response);
      });
    for (const method of ['GET', 'POST', 'OPTIONS'] as HTTPMethods[]) {
      toProvider(method, `${OAUTH_PATH}/*`);
    }
    // RFC 8414 metadata at the root (the issuer has no path), and its OpenID Connect twin.
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      toProvider('GET', url, '/.well-known/openid-configuration');
      toProvider('OPTIONS', url, '/.well-known/openid-configuration');
    }
    scope.get('/.well-known/oauth-protected-resource', (request, reply) => this.resourceMetadata(reply, '/mcp'));
    for (const path of PROTECTED_PATHS) {
      scope.get(`/.well-known/oauth-protected-resource${path}`, (request, reply) => this.resourceMetadata(reply, path));
    }
    scope.get(`${CONSENT_PATH}/:uid/details`, (request, reply) => this.answer(request, reply, () => this.consentDetails(request, reply)));
    scope.post(`${CONSENT_PATH}/:uid/decision`, (request, reply) => this.answer(request, reply, () => this.decide(request, reply)));
  }

  private callProvider(request: FastifyRequest, response: ServerResponse): void {
    response.setHeader('x-request-id', String(request.id));
    const answered = (async () => {
      if (!(await this.withinLimits(request, response))) return;
      await (await this.provider!).callback()(request.raw, response);
    })();
    answered.catch((error: unknown) => {
      this.logger.error({ err: error }, 'OAuth request failed');
      if (response.headersSent) return void response.destroy();
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'temporarily_unavailable', error_description: 'The authorization server is not available' }));
    });
  }

  /**
   * Anyone may call the authorization server's endpoints, so each client address gets a share:
   * OAUTH_REQUESTS_PER_MINUTE requests, of which OAUTH_REGISTRATIONS_PER_HOUR registrations (each
   * one a stored client). Past it the answer is 429 with Retry-After, in OAuth's error shape.
   * @returns false when the request was refused (and answered)
   */
  private async withinLimits(request: FastifyRequest, response: ServerResponse): Promise<boolean> {
    const address = request.ip;
    const checks: [string, number, number][] = [[`oauth:requests:${address}`, this.config.OAUTH_REQUESTS_PER_MINUTE, 60_000]];
    if (request.method === 'POST' && request.url.split('?')[0] === `${OAUTH_PATH}/register`) {
      checks.push([`oauth:registrations:${address}`, this.config.OAUTH_REGISTRATIONS_PER_HOUR, 3_600_000]);
    }
    for (const [key, limit, windowMs] of checks) {
      if (limit === 0) continue;
      const decision = await this.limiter.take(key, limit, windowMs);
      if (decision.allowed) continue;
      const what = windowMs === 60_000 ? `${limit} requests a minute` : `${limit} client registrations an hour`;
      response.writeHead(429, {
        'content-type': 'application/json',
        'retry-after': String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000))),
        'cache-control': 'no-store',
      });
      response.end(JSON.stringify({ error: 'temporarily_unavailable', error_description: `this address may make ${what} here` }));
      return false;
    }
    return true;
  }

  /** RFC 9728 Protected Resource Metadata of one MCP door. */
  private resourceMetadata(reply: FastifyReply, path: ProtectedPath): void {
    void reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', 'public, max-age=3600')
      .send({
        resource: this.resourceOf(path),
        authorization_servers: [this.issuer],
        scopes_supported: SUPPORTED_SCOPES,
        bearer_methods_supported: ['header'],
        resource_name: 'Workflow and collection service (MCP)',
        resource_documentation: `${this.issuer}/docs`,
      });
  }

  /** Runs a consent handler; its refusals are the service's error bodies. */
  private async answer(request: FastifyRequest, reply: FastifyReply, handle: () => Promise<unknown>): Promise<void> {
    try {
      void reply.header('cache-control', 'no-store').send(await handle());
    } catch (error) {
      const known = isAppError(error) ? error : interactionError(error);
      sendError(reply, request, known ?? new AppError(ErrorCode.INTERNAL, 'Internal error', { cause: error }), this.logger);
    }
  }

  /** The user signs in on the consent page with an API key (theirs, or the console's session). */
  private signedIn(request: FastifyRequest): Promise<Principal> {
    return this.apiKeys.authenticate(presentedKey(request.headers));
  }

  /** What the consent page shows: who asks, for what, and what the user could choose from. */
  private async consentDetails(request: FastifyRequest, reply: FastifyReply) {
    const principal = await this.signedIn(request);
    const provider = await this.provider!;
    const details = await provider.interactionDetails(request.raw, reply.raw);
    this.assertUid(request, details.uid);
    const client = await provider.Client.find(details.params.client_id ?? '');
    const [collections, workflows] = await Promise.all([
      this.collections.list(principal, { offset: 0, limit: MAX_CHOSEN }),
      this.workflowTools.list(principal),
    ]);
    return {
      client: { id: client?.clientId ?? details.params.client_id, name: client?.clientName ?? null, uri: client?.clientUri ?? null },
      redirectUri: details.params.redirect_uri ?? null,
      resource: details.params.resource ?? this.resourceOf('/mcp'),
      scopes: requestedScopes(details.params.scope).map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] })),
      collections: collections.items.map(({ id, name }) => ({ id, name })),
      workflows: workflows.map(({ workflowId, name, title }) => ({ workflowId, name, title })),
    };
  }

  /**
   * The user's answer: allow with the scopes granted (among those asked) and, optionally, the
   * collections and workflows the access is narrowed to; or deny. Answers where the browser goes
   * next (back to the authorization endpoint, which sends it on to the client).
   */
  private async decide(request: FastifyRequest, reply: FastifyReply): Promise<{ redirectTo: string }> {
    const principal = await this.signedIn(request);
    const provider = await this.provider!;
    const details = await provider.interactionDetails(request.raw, reply.raw);
    this.assertUid(request, details.uid);
    const decision = await this.readDecision(principal, request.body, requestedScopes(details.params.scope));
    const finish = (result: Record<string, unknown>) =>
      provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: false }).then((redirectTo) => ({ redirectTo }));
    if (decision === 'deny') return finish({ error: 'access_denied', error_description: 'The user denied the access' });

    const resource = details.params.resource ?? this.resourceOf('/mcp');
    const grant = new provider.Grant({ accountId: principal.userId, clientId: details.params.client_id ?? '' });
    const asked = requestedScopes(details.params.scope);
    if (decision.scopes.length) grant.addResourceScope(resource, decision.scopes.join(' '));
    const refused = asked.filter((scope) => !decision.scopes.includes(scope));
    // Scopes not granted are answered (refused), so the provider does not ask for them again.
    if (refused.length) grant.rejectResourceScope(resource, refused.join(' '));
    const oidcScopes = (details.params.scope ?? '').split(' ').filter((scope) => scope === 'openid' || scope === 'offline_access');
    if (oidcScopes.length) grant.addOIDCScope(oidcScopes.join(' '));
    const grantId = await grant.save();
    await this.store.upsert({
      kind: CONSENT_KIND,
      idHash: hashOf(grantId),
      payload: JSON.stringify(decision.chosen),
      grantHash: hashOf(grantId),
      uidHash: null,
      userCodeHash: null,
      expiresAt: new Date(Date.now() + this.config.OAUTH_REFRESH_TOKEN_TTL_SECONDS * 1000),
      consumedAt: null,
    });
    return finish({ login: { accountId: principal.userId }, consent: { grantId } });
  }

  /** The decision in the request body, checked: each refusal names its field. */
  private async readDecision(
    principal: Principal,
    body: unknown,
    asked: string[],
  ): Promise<'deny' | { scopes: string[]; chosen: ChosenOnConsent }> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body', 'must be a JSON object');
    const input = body as Record<string, unknown>;
    if (input.allow === false) return 'deny';
    if (input.allow !== true) throw invalid('allow', 'must be true (grant) or false (deny)');
    const scopes = stringList(input.scopes, 'scopes', SUPPORTED_SCOPES.length);
    for (const scope of scopes) if (!asked.includes(scope)) throw invalid('scopes', `${scope} was not asked for by the client`);
    const chosen: ChosenOnConsent = {};
    if (input.collections !== undefined && input.collections !== null) {
      const ids = stringList(input.collections, 'collections', MAX_CHOSEN);
      if (ids.length === 0) throw invalid('collections', 'choose at least one collection, or leave it out for all of them');
      for (const id of ids) {
        await this.collections.get(principal, id).catch((error: unknown) => {
          throw isAppError(error) && error.httpStatus < 500 ? invalid('collections', `${id} is not a collection you can read`) : error;
        });
      }
      chosen.collections = ids;
    }
    if (input.workflows !== undefined && input.workflows !== null) {
      const ids = stringList(input.workflows, 'workflows', MAX_CHOSEN);
      if (ids.length === 0) throw invalid('workflows', 'choose at least one workflow, or leave it out for all of them');
      const callable = new Set((await this.workflowTools.list(principal)).map((tool) => tool.workflowId));
      for (const id of ids) if (!callable.has(id)) throw invalid('workflows', `${id} is not a workflow you can call as a tool`);
      chosen.workflows = ids;
    }
    return { scopes, chosen };
  }

  /** The interaction the browser's cookie names must be the one of the page. */
  private assertUid(request: FastifyRequest, uid: string): void {
    if ((request.params as { uid: string }).uid !== uid) {
      throw new AppError(ErrorCode.CONFLICT, 'This browser is in another authorization request: start again from the client');
    }
  }
}

/** The scopes a client asked for that this server knows (the others it cannot grant). */
const requestedScopes = (scope: string | undefined): string[] =>
  [...new Set((scope ?? '').split(' '))].filter((name) => SUPPORTED_SCOPES.includes(name));

const invalid = (field: string, reason: string) => AppError.validation([{ field, reason }], `Invalid consent: ${field} ${reason}`);

function stringList(value: unknown, field: string, max: number): string[] {
  if (!Array.isArray(value)) throw invalid(field, 'must be an array of strings');
  if (value.length > max) throw invalid(field, `may hold at most ${max} entries`);
  for (const entry of value)
    if (typeof entry !== 'string' || entry.length === 0 || entry.length > 200) throw invalid(field, 'must hold ids');
  return [...new Set(value as string[])];
}

/** oidc-provider's refusal of an interaction (no cookie, expired), as the service's error. */
function interactionError(error: unknown): AppError | undefined {
  const name = (error as { name?: string } | undefined)?.name;
  if (name !== 'SessionNotFound' && name !== 'InvalidRequest') return undefined;
  return new AppError(
    ErrorCode.GONE,
    'This authorization request expired or was started in another browser: start the connection again from the client',
  );
}
