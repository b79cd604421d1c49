import { Injectable } from '@nestjs/common';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { ApiKeyService, presentedKey } from '../../auth/api-key.service';
import { Principal } from '../../auth/principal';
import { AppError, ErrorCode, isAppError } from '../../common/app-error';
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
  extra: { principal: caller.principal },
});

/** The principal a handler acts for, from the authInfo its request carried. */
export function principalOf(authInfo: AuthInfo | undefined): Principal {
  const principal = authInfo?.extra?.principal as Principal | undefined;
  if (!principal) throw new AppError(ErrorCode.UNAUTHENTICATED, 'No authenticated caller on this MCP request');
  return principal;
}

/**
 * The one authentication of MCP requests over HTTP (/mcp, /sse, /messages): the credential of the
 * request, checked on every request (a session is no credential). Today an API key, as
 * `Authorization: Bearer <key>` or `x-api-key`, by the ApiKeyService the REST guard uses; other
 * credentials (OAuth access tokens for remote clients) are checked here, beside it, and say their
 * scopes in the answer. A refusal is `401` with the `WWW-Authenticate` challenge.
 */
@Injectable()
export class McpAuthentication {
  constructor(private readonly apiKeys: ApiKeyService) {}

  /** @throws RpcHttpError 401, with the challenge already set on `response` */
  async authenticate(request: FastifyRequest, response: ServerResponse): Promise<McpCaller> {
    const secret = presentedKey(request.headers);
    try {
      return { principal: await this.apiKeys.authenticate(secret) };
    } catch (error) {
      if (!isAppError(error) || error.code !== ErrorCode.UNAUTHENTICATED) throw error;
      response.setHeader('www-authenticate', secret ? 'Bearer realm="service", error="invalid_token"' : 'Bearer realm="service"');
      throw new RpcHttpError(401, RPC_SERVER_ERROR, `Unauthorized: ${error.message}`, { code: error.code, requestId: String(request.id) });
    }
  }
}
