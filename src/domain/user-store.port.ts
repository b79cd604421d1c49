import { Page, PageRequest } from '../common/page';

import type { ApiKey } from './api-key.model';
import type { User } from './user.model';

export abstract class UserStore {
  abstract createUser(user: User): Promise<void>;
  abstract getUser(id: string): Promise<User | null>;
  abstract listUsers(page: PageRequest): Promise<Page<User>>;
  abstract countUsers(): Promise<number>;
  abstract createApiKey(key: ApiKey): Promise<void>;
  abstract getApiKey(id: string): Promise<ApiKey | null>;
  abstract findApiKeyByHash(hash: string): Promise<ApiKey | null>;
  abstract listApiKeys(userId: string): Promise<ApiKey[]>;
  /** Returns false when the key does not exist or was already revoked. */
  abstract revokeApiKey(id: string, at: Date): Promise<boolean>;
  abstract touchApiKey(id: string, at: Date): Promise<void>;
}
