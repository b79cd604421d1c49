import type { Role } from './membership.model';

/**
 * What a credential is, by type: the settings anyone who may use it sees, and the secrets nobody
 * reads back once written (they are sealed at rest and only ever injected by a node at send time).
 */
export const CREDENTIAL_TYPES = ['bearer', 'basic', 'header', 'query', 'oauth2-client-credentials'] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

/** The visible settings of each type, and which of its fields are secret. */
export const CREDENTIAL_FIELDS: Record<
  CredentialType,
  { settings: readonly string[]; optionalSettings?: readonly string[]; secrets: readonly string[] }
> = {
  bearer: { settings: [], secrets: ['token'] },
  basic: { settings: ['username'], secrets: ['password'] },
  header: { settings: ['name'], secrets: ['value'] },
  query: { settings: ['name'], secrets: ['value'] },
  'oauth2-client-credentials': { settings: ['tokenUrl', 'clientId'], optionalSettings: ['scope', 'audience'], secrets: ['clientSecret'] },
};

export interface Credential {
  id: string;
  name: string;
  type: CredentialType;
  ownerId: string;
  /** Visible to whoever may use it: the header's name, the user name, the token URL... */
  settings: Record<string, string>;
  /**
   * The hosts (`host` or `host:port`, lower case) its values may be sent to; a request to any other
   * host is refused before it is sent. Empty until set, or until its owner's first use adopts that
   * use's host.
   */
  allowedHosts: string[];
  /** The secret fields as JSON, encrypted (AES-256-GCM, bound to the credential's id). */
  sealed: string;
  createdAt: Date;
  updatedAt: Date;
}

export type VisibleCredential = Credential & { role: Role };

/**
 * Settings that decide where a secret itself goes (the client secret is posted to `tokenUrl`):
 * changing one needs the secrets again, as does allowing another host.
 */
export const SECRET_DESTINATIONS: Partial<Record<CredentialType, readonly string[]>> = {
  'oauth2-client-credentials': ['tokenUrl'],
};

/**
 * How a credential was used: by a production run, a test run (or node test), to fill a dropdown
 * while building, or by a search that calls a reranker with it.
 */
export const CREDENTIAL_USE_KINDS = ['run', 'test', 'dropdown', 'search'] as const;
export type CredentialUseKind = (typeof CREDENTIAL_USE_KINDS)[number];

/** One use of a credential, kept for its owner: who, when, to which host, and whether it was sent. */
export interface CredentialUse {
  credentialId: string;
  userId: string;
  at: Date;
  host: string;
  kind: CredentialUseKind;
  runId: string | null;
  /** False: refused before sending, the host not allowed (the host is then what the use proposed). */
  allowed: boolean;
}
