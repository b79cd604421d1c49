import { Injectable } from '@nestjs/common';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { ApiKeyService, isIssuedApiKey, presentedKey } from '../../auth/api-key.service';
import { Principal } from '../../auth/principal';
import { AppError, ErrorCode, isAppError } from '../../common/app-error';
import { OAUTH_KEY_PREFIX, OAuthServer, ProtectedPath } from '../../oauth/oauth-server';
import { SUPPORTED_SCOPES } from '../../oauth/oauth-scopes';
import { RPC_SERVER_ERROR, RpcHttpError } from './json-rpc-http';

/** Whom an MCP request acts for: the user, and the scopes its credential is limited to (none: all the user's rights). */
export interface McpCaller {
  principal: Principal;
  scopes?: readonly string[];
}

/** The caller as the SDK carries it to the handlers (`ctx.http.authInfo`). */
export const authInfoOf = (caller: McpCaller): AuthInfo => ({
  token: caller.principal.keyId ?? '',
  clientId: caller.principal.userId,
  scopes: [...(caller.scopes ?? [])],
  extra: { caller },
});

/** The caller a handler acts for, from the authInfo its request carried. */
export function callerOf(authInfo: AuthInfo | undefined): McpCaller {
  const caller = authInfo?.extra?.caller as McpCaller | undefined;
  if (!caller) throw new AppError(ErrorCode.UNAUTHENTICATED, 'No authenticated caller on this MCP request');
  return caller;
}

/** Tells the sessions when a credential they were opened with is revoked, and whether one still holds. */
export interface CredentialWatch {
  onRevoked(listener: (keyId: string) => void): () => void;
  isStillValid(keyId: string): Promise<boolean>;
}

/**
 * The one authentication of MCP requests over HTTP (/mcp, /sse, /messages): the credential of the
 * request, checked on every request (a session is no credential). An API key (`Authorization:
 * Bearer <key>` or `x-api-key`, by the ApiKeyService the REST guard uses), or an OAuth access
 * token of this service's authorization server, bound to the door's resource, whose scopes the
 * answer carries. A refusal is `401` with the `WWW-Authenticate` challenge that points a client at
 * the resource's metadata (RFC 9728), where it learns how to get a token.
 */
@Injectable()
export class McpAuthentication implements CredentialWatch {
  constructor(
    private readonly apiKeys: ApiKeyService,
    private readonly oauth: OAuthServer,
  ) {}

  /** @throws RpcHttpError 401, with the challenge already set on `response` */
  async authenticate(request: FastifyRequest, response: ServerResponse, path: ProtectedPath): Promise<McpCaller> {
    const secret = presentedKey(request.headers);
    try {
      return await this.callerWith(secret, path);
    } catch (error) {
      if (!isAppError(error) || error.code !== ErrorCode.UNAUTHENTICATED) throw error;
      response.setHeader('www-authenticate', this.challenge(path, secret ? 'error="invalid_token"' : undefined));
      throw new RpcHttpError(401, RPC_SERVER_ERROR, `Unauthorized: ${error.message}`, { code: error.code, requestId: String(request.id) });
    }
  }

  /** The `WWW-Authenticate` value for the door at `path`: where its metadata is, the scopes, and the error if any. */
  challenge(path: ProtectedPath, error?: string): string {
    const parts = ['Bearer realm="service"'];
    if (error) parts.push(error);
    if (this.oauth.enabled) {
      parts.push(`resource_metadata="${this.oauth.metadataUrlOf(path)}"`);
      if (!error?.includes('scope=')) parts.push(`scope="${SUPPORTED_SCOPES.join(' ')}"`);
    }
    return parts.join(', ');
  }

  onRevoked(listener: (keyId: string) => void): () => void {
    const unsubscribe = [this.apiKeys.onRevoked(listener), this.oauth.onRevoked(listener)];
    return () => unsubscribe.forEach((stop) => stop());
  }

  isStillValid(keyId: string): Promise<boolean> {
    return keyId.startsWith(OAUTH_KEY_PREFIX) ? this.oauth.isStillValid(keyId) : this.apiKeys.isStillValid(keyId);
  }

  /** An issued API key is told by its prefix; any other bearer value is an access token first, then a key (a bootstrap key has any form). */
  private async callerWith(secret: string | undefined, path: ProtectedPath): Promise<McpCaller> {
    if (!secret || !this.oauth.enabled || isIssuedApiKey(secret)) return { principal: await this.apiKeys.authenticate(secret) };
    try {
      return await this.oauth.verify(secret, path);
    } catch (tokenRefusal) {
      if (!isAppError(tokenRefusal) || tokenRefusal.code !== ErrorCode.UNAUTHENTICATED) throw tokenRefusal;
      try {
        return { principal: await this.apiKeys.authenticate(secret) };
      } catch {
        throw tokenRefusal;
      }
    }
  }
}
