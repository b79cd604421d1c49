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
  /** The secret fields as JSON, encrypted (AES-256-GCM, bound to the credential's id). */
  sealed: string;
  createdAt: Date;
  updatedAt: Date;
}

export type VisibleCredential = Credential & { role: Role };
