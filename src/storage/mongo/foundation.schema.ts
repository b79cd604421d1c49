import { Connection, Schema } from 'mongoose';

/** Documents use our prefixed ids as `_id`; timestamps are real dates. */
export interface UserDoc {
  _id: string;
  name: string;
  email: string | null;
  isAdmin: boolean;
  createdAt: Date;
}

export interface ApiKeyDoc {
  _id: string;
  userId: string;
  name: string;
  prefix: string;
  hash: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface CollectionDoc {
  _id: string;
  name: string;
  ownerId: string;
  createdAt: Date;
  updatedAt: Date;
  embeddingModel: string | null;
  embeddingDimension: number | null;
}

export interface MembershipDoc {
  resourceType: string;
  resourceId: string;
  userId: string;
  role: string;
  createdAt: Date;
}

const options = { versionKey: false, _id: false } as const;

const userSchema = new Schema<UserDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    email: { type: String, default: null },
    isAdmin: { type: Boolean, default: false },
    createdAt: { type: Date, required: true, index: true },
  },
  options,
);

const apiKeySchema = new Schema<ApiKeyDoc>(
  {
    _id: { type: String, required: true },
    userId: { type: String, required: true, index: true },
    name: { type: String, required: true },
    prefix: { type: String, required: true },
    hash: { type: String, required: true, unique: true },
    createdAt: { type: Date, required: true },
    lastUsedAt: { type: Date, default: null },
    revokedAt: { type: Date, default: null },
  },
  options,
);

const collectionSchema = new Schema<CollectionDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    ownerId: { type: String, required: true },
    createdAt: { type: Date, required: true, index: true },
    updatedAt: { type: Date, required: true },
    embeddingModel: { type: String, default: null },
    embeddingDimension: { type: Number, default: null },
  },
  options,
);

const membershipSchema = new Schema<MembershipDoc>(
  {
    resourceType: { type: String, required: true },
    resourceId: { type: String, required: true },
    userId: { type: String, required: true },
    role: { type: String, required: true, enum: ['owner', 'editor', 'viewer'] },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);
membershipSchema.index({ resourceType: 1, resourceId: 1, userId: 1 }, { unique: true });
membershipSchema.index({ userId: 1, resourceType: 1 });

export function foundationModels(connection: Connection) {
  return {
    users: connection.models.User ?? connection.model<UserDoc>('User', userSchema, 'users'),
    apiKeys: connection.models.ApiKey ?? connection.model<ApiKeyDoc>('ApiKey', apiKeySchema, 'api_keys'),
    collections: connection.models.Collection ?? connection.model<CollectionDoc>('Collection', collectionSchema, 'collections'),
    memberships: connection.models.Membership ?? connection.model<MembershipDoc>('Membership', membershipSchema, 'memberships'),
  };
}
