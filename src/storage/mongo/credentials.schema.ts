import { Connection, Schema } from 'mongoose';
import { Credential, CREDENTIAL_TYPES } from '../../domain/credential.model';

/** The port's record, keyed by our id as `_id`; settings kept as JSON text (user-chosen keys are not field names). */
export type CredentialDoc = Omit<Credential, 'id' | 'settings'> & { _id: string; settingsJson: string };

const credentialSchema = new Schema<CredentialDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    type: { type: String, required: true, enum: CREDENTIAL_TYPES },
    ownerId: { type: String, required: true },
    settingsJson: { type: String, required: true },
    sealed: { type: String, required: true },
    createdAt: { type: Date, required: true, index: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false, _id: false },
);

export function credentialModels(connection: Connection) {
  return {
    credentials: connection.models.Credential ?? connection.model<CredentialDoc>('Credential', credentialSchema, 'credentials'),
  };
}
