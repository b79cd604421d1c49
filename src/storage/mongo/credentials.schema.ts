import { Connection, Schema } from 'mongoose';
import { Credential, CREDENTIAL_TYPES, CREDENTIAL_USE_KINDS, CredentialUse } from '../../domain/credential.model';

/** The port's record, keyed by our id as `_id`; settings kept as JSON text (user-chosen keys are not field names). */
export type CredentialDoc = Omit<Credential, 'id' | 'settings'> & { _id: string; settingsJson: string };

const credentialSchema = new Schema<CredentialDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    type: { type: String, required: true, enum: CREDENTIAL_TYPES },
    ownerId: { type: String, required: true },
    settingsJson: { type: String, required: true },
    // Absent on credentials stored before it was kept: none allowed yet, the owner's next use adopts its host.
    allowedHosts: { type: [String], default: [] },
    sealed: { type: String, required: true },
    createdAt: { type: Date, required: true, index: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, _id: false },
);

export type CredentialUseDoc = CredentialUse;

const credentialUseSchema = new Schema<CredentialUseDoc>(
  {
    credentialId: { type: String, required: true },
    userId: { type: String, required: true },
    at: { type: Date, required: true },
    host: { type: String, required: true },
    kind: { type: String, required: true, enum: CREDENTIAL_USE_KINDS },
    runId: { type: String, default: null },
    allowed: { type: Boolean, required: true },
  },
  { versionKey: false },
);
credentialUseSchema.index({ credentialId: 1, at: -1 });

export function credentialModels(connection: Connection) {
  return {
    credentials: connection.models.Credential ?? connection.model<CredentialDoc>('Credential', credentialSchema, 'credentials'),
    uses: connection.models.CredentialUse ?? connection.model<CredentialUseDoc>('CredentialUse', credentialUseSchema, 'credential_uses'),
  };
}
