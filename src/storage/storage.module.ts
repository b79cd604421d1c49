import { Module } from '@nestjs/common';
import { SqliteCollectionStore } from './embedded/sqlite-collection-store.adapter';
import { SqliteMembershipStore } from './embedded/sqlite-membership-store.adapter';
import { SqliteUserStore } from './embedded/sqlite-user-store.adapter';
import { SqliteRunStore } from './embedded/sqlite-run-store.adapter';
import { SqliteWorkflowStore } from './embedded/sqlite-workflow-store.adapter';
import { CollectionStore } from '../domain/collection-store.port';
import { CredentialStore } from '../domain/credential-store.port';
import { SqliteCredentialStore } from './embedded/sqlite-credential-store.adapter';
import { MembershipStore } from '../domain/membership-store.port';
import { RunStore } from '../domain/run-store.port';
import { UserStore } from '../domain/user-store.port';
import { WorkflowStore } from '../domain/workflow-store.port';
import { StorageConnections, storeProvider } from './storage-connections';
import { ConversationStore } from '../domain/conversation-store.port';
import { SqliteConversationStore } from './embedded/sqlite-conversation-store.adapter';
import { ServiceIdentityStore } from '../domain/service-identity.port';
import { SqliteServiceIdentityStore } from './embedded/sqlite-service-identity-store.adapter';
import { OAuthStore } from '../domain/oauth-store.port';
import { SqliteOAuthStore } from './embedded/sqlite-oauth-store.adapter';
import { StoreCommits, UnwatchedStoreCommits } from '../domain/store-commits.port';
import { SqliteCommitWatch } from './embedded/commit-watch';

const stores = [
  storeProvider(
    ServiceIdentityStore,
    (db) => new SqliteServiceIdentityStore(db),
    async (c) => new (await import('./mongo/mongo-service-identity-store.adapter')).MongoServiceIdentityStore(c),
  ),
  storeProvider(
    UserStore,
    (db) => new SqliteUserStore(db),
    async (c) => new (await import('./mongo/mongo-user-store.adapter')).MongoUserStore(c),
  ),
  storeProvider(
    MembershipStore,
    (db) => new SqliteMembershipStore(db),
    async (c) => new (await import('./mongo/mongo-membership-store.adapter')).MongoMembershipStore(c),
  ),
  storeProvider(
    CollectionStore,
    (db) => new SqliteCollectionStore(db),
    async (c) => new (await import('./mongo/mongo-collection-store.adapter')).MongoCollectionStore(c),
  ),
  storeProvider(
    WorkflowStore,
    (db) => new SqliteWorkflowStore(db),
    async (c) => new (await import('./mongo/mongo-workflow-store.adapter')).MongoWorkflowStore(c),
  ),
  storeProvider(
    RunStore,
    (db) => new SqliteRunStore(db),
    async (c) => new (await import('./mongo/mongo-run-store.adapter')).MongoRunStore(c),
  ),
  storeProvider(
    CredentialStore,
    (db) => new SqliteCredentialStore(db),
    async (c) => new (await import('./mongo/mongo-credential-store.adapter')).MongoCredentialStore(c),
  ),
  storeProvider(
    ConversationStore,
    (db) => new SqliteConversationStore(db),
    async (c) => new (await import('./mongo/mongo-conversation-store.adapter')).MongoConversationStore(c),
  ),
  storeProvider(
    OAuthStore,
    (db) => new SqliteOAuthStore(db),
    async (c) => new (await import('./mongo/mongo-oauth-store.adapter')).MongoOAuthStore(c),
  ),
  storeProvider(
    StoreCommits,
    (db) => new SqliteCommitWatch(db),
    () => new UnwatchedStoreCommits(),
  ),
];

/**
 * The store's identity, and the document stores of users, memberships, collections, workflows, runs,
 * credentials, agent conversations and the OAuth server's state, on SQLite or MongoDB; and the watch
 * of other processes' commits (StoreCommits).
 */
@Module({
  providers: [StorageConnections, ...stores],
  exports: [
    StorageConnections,
    ServiceIdentityStore,
    UserStore,
    MembershipStore,
    CollectionStore,
    WorkflowStore,
    RunStore,
    CredentialStore,
    ConversationStore,
    OAuthStore,
    StoreCommits,
  ],
})
export class StorageModule {}
