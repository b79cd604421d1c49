import { Module } from '@nestjs/common';
import { SqliteCollectionStore } from './embedded/sqlite-collection-store.adapter';
import { SqliteMembershipStore } from './embedded/sqlite-membership-store.adapter';
import { SqliteUserStore } from './embedded/sqlite-user-store.adapter';
import { MongoCollectionStore } from './mongo/mongo-collection-store.adapter';
import { MongoMembershipStore } from './mongo/mongo-membership-store.adapter';
import { MongoUserStore } from './mongo/mongo-user-store.adapter';
import { SqliteRunStore } from './embedded/sqlite-run-store.adapter';
import { SqliteWorkflowStore } from './embedded/sqlite-workflow-store.adapter';
import { MongoRunStore } from './mongo/mongo-run-store.adapter';
import { MongoWorkflowStore } from './mongo/mongo-workflow-store.adapter';
import { CollectionStore } from '../domain/collection-store.port';
import { CredentialStore } from '../domain/credential-store.port';
import { SqliteCredentialStore } from './embedded/sqlite-credential-store.adapter';
import { MongoCredentialStore } from './mongo/mongo-credential-store.adapter';
import { MembershipStore } from '../domain/membership-store.port';
import { RunStore } from '../domain/run-store.port';
import { UserStore } from '../domain/user-store.port';
import { WorkflowStore } from '../domain/workflow-store.port';
import { StorageConnections, storeProvider } from './storage-connections';
import { ConversationStore } from '../domain/conversation-store.port';
import { SqliteConversationStore } from './embedded/sqlite-conversation-store.adapter';
import { MongoConversationStore } from './mongo/mongo-conversation-store.adapter';
import { ServiceIdentityStore } from '../domain/service-identity.port';
import { SqliteServiceIdentityStore } from './embedded/sqlite-service-identity-store.adapter';
import { MongoServiceIdentityStore } from './mongo/mongo-service-identity-store.adapter';
import { OAuthStore } from '../domain/oauth-store.port';
import { SqliteOAuthStore } from './embedded/sqlite-oauth-store.adapter';
import { MongoOAuthStore } from './mongo/mongo-oauth-store.adapter';
import { StoreCommits, UnwatchedStoreCommits } from '../domain/store-commits.port';
import { SqliteCommitWatch } from './embedded/commit-watch';

const stores = [
  storeProvider(
    ServiceIdentityStore,
    (db) => new SqliteServiceIdentityStore(db),
    (c) => new MongoServiceIdentityStore(c),
  ),
  storeProvider(
    UserStore,
    (db) => new SqliteUserStore(db),
    (c) => new MongoUserStore(c),
  ),
  storeProvider(
    MembershipStore,
    (db) => new SqliteMembershipStore(db),
    (c) => new MongoMembershipStore(c),
  ),
  storeProvider(
    CollectionStore,
    (db) => new SqliteCollectionStore(db),
    (c) => new MongoCollectionStore(c),
  ),
  storeProvider(
    WorkflowStore,
    (db) => new SqliteWorkflowStore(db),
    (c) => new MongoWorkflowStore(c),
  ),
  storeProvider(
    RunStore,
    (db) => new SqliteRunStore(db),
    (c) => new MongoRunStore(c),
  ),
  storeProvider(
    CredentialStore,
    (db) => new SqliteCredentialStore(db),
    (c) => new MongoCredentialStore(c),
  ),
  storeProvider(
    ConversationStore,
    (db) => new SqliteConversationStore(db),
    (c) => new MongoConversationStore(c),
  ),
  storeProvider(
    OAuthStore,
    (db) => new SqliteOAuthStore(db),
    (c) => new MongoOAuthStore(c),
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
