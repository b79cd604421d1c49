import type { CredentialUseKind } from '../domain/credential.model';
import { NodeConfigurationError } from '../sdk';

/** A request about to go out, as a credential changes it. */
export interface OutgoingRequest {
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
}

export interface AppliedCredential extends OutgoingRequest {
  /** Headers carrying the credential: dropped if a redirect leads to another origin. */
  sensitiveHeaders: string[];
  /** Every value this request carries that records must mask (a token fetched just now included). */
  secrets: string[];
}

/** A credential a run may use, ready to be injected by a node at send time; its values never reach the node. */
export interface ResolvedCredential {
  id: string;
  type: string;
  /** The values known before sending (and the forms they go out in), for the run's masks. */
  secrets: readonly string[];
  apply(request: OutgoingRequest, signal?: AbortSignal): Promise<AppliedCredential>;
  /** The upstream refused what `apply` gave (401): a fetched token is dropped, and the next apply fetches another. */
  refused(): void;
}

/** What a use is for, as the credential's record of uses says: a run (production or test), a dropdown or a search. */
export interface CredentialUseContext {
  kind: CredentialUseKind;
  runId: string | null;
}

/**
 * Resolves a credential for the user a run acts as: they need the viewer role ("use") on it. The
 * credentials side registers the real one globally; without it (engine unit tests) nodes are
 * told credentials are unavailable. Every request it is applied to is checked against the
 * credential's allowed hosts and recorded as a use of `use`'s kind.
 */
export abstract class NodeCredentials {
  /** @throws NodeConfigurationError naming the credential when it is missing or not usable by `userId`. */
  abstract resolve(userId: string, credentialId: string, use: CredentialUseContext): Promise<ResolvedCredential>;
}

export class UnavailableCredentials extends NodeCredentials {
  resolve(_userId: string, credentialId: string, _use?: CredentialUseContext): Promise<ResolvedCredential> {
    return Promise.reject(
      new NodeConfigurationError(`Credentials are not available to workflow nodes in this deployment (credential ${credentialId})`),
    );
  }
}
