/**
 * One artefact of the OAuth authorization server (a client, an interaction, a session, a grant, an
 * authorization code, an access or refresh token...), keyed by the hash of its id: for the tokens
 * and codes the id is the bearer value itself, so the store never holds one. `kind` names the
 * artefact's model; `payload` is its JSON, without its id. `grantHash`, `uidHash` and
 * `userCodeHash` are the hashes of the values it is looked up or revoked by.
 */
export interface OAuthRecord {
  kind: string;
  idHash: string;
  payload: string;
  grantHash: string | null;
  uidHash: string | null;
  userCodeHash: string | null;
  /** Gone at this time (the store may drop it then); null never expires. */
  expiresAt: Date | null;
  /** A one-time artefact (a code) that was used. */
  consumedAt: Date | null;
}

/** Where the authorization server keeps its state, so grants and tokens outlive a restart and are shared between API processes. */
export abstract class OAuthStore {
  /** Creates or replaces the record of (kind, idHash). */
  abstract upsert(record: OAuthRecord): Promise<void>;
  /** The record, unless it does not exist or expired before `now`. */
  abstract find(kind: string, idHash: string, now: Date): Promise<OAuthRecord | null>;
  /** The live record of this kind with this uid hash (sessions) or user code hash (device flow). */
  abstract findBy(kind: string, field: 'uidHash' | 'userCodeHash', hash: string, now: Date): Promise<OAuthRecord | null>;
  /** Marks a one-time artefact used; false when it does not exist. */
  abstract consume(kind: string, idHash: string, at: Date): Promise<boolean>;
  abstract destroy(kind: string, idHash: string): Promise<void>;
  /** Removes every artefact of the grant (its tokens and codes, whatever their kind); how many went. */
  abstract revokeByGrant(grantHash: string): Promise<number>;
}
