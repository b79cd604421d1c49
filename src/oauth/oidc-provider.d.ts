/**
 * The part of oidc-provider 9 (an ES module without type declarations) the service uses. See
 * https://github.com/panva/node-oidc-provider/blob/main/docs/README.md.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AccessTokenModel {
    accountId?: string;
    clientId?: string;
    grantId?: string;
    scope?: string;
    aud?: string | string[];
    extra?: Record<string, unknown>;
  }

  export interface GrantModel {
    addResourceScope(resource: string, scope: string): void;
    rejectResourceScope(resource: string, scope: string): void;
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, string | undefined>;
    grantId?: string;
  }

  export interface ClientModel {
    clientId: string;
    clientName?: string;
    clientUri?: string;
    logoUri?: string;
    redirectUris?: string[];
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    on(event: string, listener: (...args: any[]) => void): this;
    AccessToken: { find(token: string): Promise<AccessTokenModel | undefined> };
    Grant: { new (properties: { accountId: string; clientId: string }): GrantModel; find(id: string): Promise<GrantModel | undefined> };
    Client: { find(id: string): Promise<ClientModel | undefined> };
  }

  export const errors: Record<string, new (description?: string) => Error>;
}
