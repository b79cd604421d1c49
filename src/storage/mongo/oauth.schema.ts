import { Connection, Schema } from 'mongoose';
import type { OAuthRecord } from '../../domain/oauth-store.port';

/** The port's record; MongoDB deletes it once `expiresAt` passed (TTL index). */
export type OAuthDoc = OAuthRecord;

const oauthSchema = new Schema<OAuthDoc>(
  {
    kind: { type: String, required: true },
    idHash: { type: String, required: true },
    payload: { type: String, required: true },
    grantHash: { type: String, default: null },
    uidHash: { type: String, default: null },
    userCodeHash: { type: String, default: null },
    expiresAt: { type: Date, default: null },
    consumedAt: { type: Date, default: null },
  },
  { versionKey: false },
);
oauthSchema.index({ kind: 1, idHash: 1 }, { unique: true });
oauthSchema.index({ grantHash: 1 }, { partialFilterExpression: { grantHash: { $type: 'string' } } });
oauthSchema.index({ kind: 1, uidHash: 1 }, { partialFilterExpression: { uidHash: { $type: 'string' } } });
oauthSchema.index({ kind: 1, userCodeHash: 1 }, { partialFilterExpression: { userCodeHash: { $type: 'string' } } });
// The TTL monitor runs about once a minute: reads check `expiresAt` themselves.
oauthSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

export function oauthModels(connection: Connection) {
  return { records: connection.models.OAuthRecord ?? connection.model<OAuthDoc>('OAuthRecord', oauthSchema, 'oauth_records') };
}
