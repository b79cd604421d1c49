import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../common/logger';
import { AppConfig } from '../config/app-config';
import { AppError } from '../common/app-error';
import { newId } from '../common/ids';
import { Page, PageRequest } from '../common/page';
import { User } from '../domain/user.model';
import { UserStore } from '../domain/user-store.port';
import { ApiKeyService, IssuedKey } from './api-key.service';

export interface NewUser {
  name: string;
  email?: string | null;
  isAdmin?: boolean;
}

@Injectable()
export class UsersService implements OnApplicationBootstrap {
  private readonly logger: Logger;

  constructor(
    private readonly users: UserStore,
    private readonly apiKeys: ApiKeyService,
    private readonly config: AppConfig,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'users' });
  }

  /** Creates the user and a first API key, whose secret the caller shows once. */
  async create(input: NewUser, secret?: string): Promise<{ user: User; issued: IssuedKey }> {
    const user: User = {
      id: newId('usr'),
      name: input.name,
      email: input.email ?? null,
      isAdmin: input.isAdmin ?? false,
      createdAt: new Date(),
    };
    await this.users.createUser(user);
    const issued = await this.apiKeys.issue(user.id, 'default', secret);
    return { user, issued };
  }

  async get(id: string): Promise<User> {
    const user = await this.users.getUser(id);
    if (!user) throw AppError.notFound('user', id);
    return user;
  }

  list(page: PageRequest): Promise<Page<User>> {
    return this.users.listUsers(page);
  }

  /** An empty store with BOOTSTRAP_API_KEY set gets an admin who owns that key. */
  async onApplicationBootstrap(): Promise<void> {
    const secret = this.config.BOOTSTRAP_API_KEY;
    if (!secret || (await this.users.countUsers()) > 0) return;
    const { user } = await this.create({ name: 'admin', isAdmin: true }, secret);
    this.logger.info({ userId: user.id }, 'created the admin user owning BOOTSTRAP_API_KEY');
  }
}
