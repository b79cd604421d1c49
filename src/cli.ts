import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { apiKeyView, issuedKeyView, userView } from './auth/auth.dto';
import { ApiKeyService } from './auth/api-key.service';
import { AuthModule } from './auth/auth.module';
import { UsersService } from './auth/users.service';
import { isAppError } from './common/app-error';
import { createRootLogger } from './common/logger';
import { LoggerModule } from './common/logger.module';
import { ConfigError, loadConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { StorageModule } from './storage/storage.module';
import { UserStore } from './domain/user-store.port';

const USAGE = `Usage: npm run -s cli -- <command> [options]

Commands:
  user:create --name <name> [--email <email>] [--admin]   create a user; prints its first API key once
  key:create --user <userId> [--name <label>]             issue another API key; printed once
  key:revoke --key <keyId>                                revoke an API key
  keys:list --user <userId>                               list a user's keys (never the secrets)
  users:list                                              list users

Output is JSON on stdout, e.g. \`npm run -s cli -- user:create --name ada --admin | jq -r .apiKey.key\`
(-s keeps npm's own banner off stdout). Configuration comes from the same environment as the server (DATA_DIR, MONGODB_URI).`;

const options = {
  name: { type: 'string' },
  email: { type: 'string' },
  admin: { type: 'boolean' },
  user: { type: 'string' },
  key: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`--${flag} is required`);
  return value;
}

async function run(argv: string[]): Promise<unknown> {
  const { positionals, values } = parseArgs({ args: argv, options, allowPositionals: true });
  const command = positionals[0];
  if (values.help || !command) throw new UsageError('');

  const config = loadConfig();
  // Output is the JSON on stdout: errors, the only lines logged, go to stderr.
  @Module({ imports: [ConfigModule.forRoot(config), LoggerModule.forRoot(createRootLogger('error', 2)), StorageModule, AuthModule] })
  class CliModule {}
  const app = await NestFactory.createApplicationContext(CliModule, { logger: ['error'] });
  try {
    const users = app.get(UsersService);
    const apiKeys = app.get(ApiKeyService);
    switch (command) {
      case 'user:create': {
        const { user, issued } = await users.create({
          name: required(values.name, 'name'),
          email: values.email ?? null,
          isAdmin: values.admin ?? false,
        });
        return { user: userView(user), apiKey: issuedKeyView(issued) };
      }
      case 'key:create': {
        const user = await users.get(required(values.user, 'user'));
        return issuedKeyView(await apiKeys.issue(user.id, values.name ?? 'cli'));
      }
      case 'key:revoke': {
        const store = app.get(UserStore);
        const keyId = required(values.key, 'key');
        const key = await store.getApiKey(keyId);
        if (!key) throw new UsageError(`API key ${keyId} not found`);
        await apiKeys.revoke(key.userId, keyId);
        return { id: keyId, revoked: true };
      }
      case 'keys:list':
        return { items: (await apiKeys.list(required(values.user, 'user'))).map(apiKeyView) };
      case 'users:list': {
        const page = await users.list({ offset: 0, limit: 1000 });
        return { items: page.items.map(userView), total: page.total };
      }
      default:
        throw new UsageError(`Unknown command: ${command}`);
    }
  } finally {
    await app.close();
  }
}

run(process.argv.slice(2)).then(
  (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message ? `${error.message}\n\n` : ''}${USAGE}\n`);
    } else if (error instanceof ConfigError || isAppError(error) || error instanceof TypeError) {
      process.stderr.write(`${(error as Error).message}\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = 1;
  },
);
