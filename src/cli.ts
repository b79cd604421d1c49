import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { apiKeyView, CreateApiKeyDto, CreateUserDto, issuedKeyView, userView } from './auth/auth.dto';
import { ApiKeyService } from './auth/api-key.service';
import { AuthModule } from './auth/auth.module';
import { UsersService } from './auth/users.service';
import { AppError, isAppError } from './common/app-error';
import { validateInput } from './common/input-validation';
import { createRootLogger } from './common/logger';
import { LoggerModule } from './common/logger.module';
import { MAX_PAGE_SIZE } from './common/pagination';
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

type Option = keyof typeof options;

/** The options each command takes: any other is refused, not ignored. */
const COMMANDS: Record<string, readonly Option[]> = {
  'user:create': ['name', 'email', 'admin'],
  'key:create': ['user', 'name'],
  'key:revoke': ['key'],
  'keys:list': ['user'],
  'users:list': [],
};

/** The option names of the REST fields the CLI's values are checked as (the API's own DTOs). */
const FLAG_OF_FIELD: Record<string, string> = { isAdmin: '--admin' };

class UsageError extends Error {}

/** The help asked for: usage on stderr (stdout holds JSON only), exit code 0. */
class HelpAsked extends Error {}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`--${flag} is required`);
  return value;
}

/**
 * The command and its options, each given at most once, each one the command takes, and nothing
 * else on the line: `--admin false` would otherwise make an admin (a boolean option takes no value,
 * and the word after it was dropped), and `--name Jane Doe` a user called Jane.
 */
function parseCommand(argv: string[]): { command: string; values: Partial<Record<Option, string | boolean>> } {
  const { positionals, values, tokens } = parseArgs({ args: argv, options, allowPositionals: true, tokens: true });
  if (values.help) throw new HelpAsked();
  const [command, ...extra] = positionals;
  if (!command) throw new UsageError('');
  const allowed = COMMANDS[command];
  if (!allowed) throw new UsageError(`Unknown command: ${command}`);
  if (extra.length) {
    const afterAdmin = tokens.some((token, i) => token.kind === 'option' && token.name === 'admin' && tokens[i + 1]?.kind === 'positional');
    throw new UsageError(
      `Unexpected argument: ${extra[0]}` +
        (afterAdmin ? ' (--admin takes no value: leave it out for a user who is not an admin)' : ' (quote a value that holds spaces)'),
    );
  }
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
    seen.add(token.name);
    if (!allowed.includes(token.name as Option)) throw new UsageError(`--${token.name} is not an option of ${command}`);
  }
  return { command, values };
}

/**
 * The values checked by the REST API's own DTOs (trimmed, lengths, an e-mail address), so a user or
 * key made here could have been made over HTTP.
 * @throws AppError VALIDATION_FAILED naming each option
 */
function checked<T extends object>(dto: new () => T, plain: Record<string, unknown>): T {
  try {
    return validateInput(dto, plain);
  } catch (error) {
    if (!isAppError(error)) throw error;
    const fields = (error.details as { fields?: { field: string; reason: string }[] } | undefined)?.fields ?? [];
    throw new AppError(
      error.code,
      `Invalid options: ${fields.map((f) => `${FLAG_OF_FIELD[f.field] ?? `--${f.field}`}: ${f.reason}`).join('; ')}`,
    );
  }
}

async function run(argv: string[]): Promise<unknown> {
  const { command, values } = parseCommand(argv);
  const flag = (name: Option) => values[name] as string | undefined;
  // Checked before the store is opened (or created): a refused command leaves nothing behind.
  const newUser =
    command === 'user:create'
      ? checked(CreateUserDto, { name: required(flag('name'), 'name'), email: flag('email'), isAdmin: values.admin ?? false })
      : undefined;
  const newKey = command === 'key:create' ? checked(CreateApiKeyDto, { name: flag('name') ?? 'cli' }) : undefined;

  const config = loadConfig();
  // Output is the JSON on stdout: errors, the only lines logged, go to stderr. A store that cannot
  // be opened is an error this program reports (abortOnError: false), not a stack trace Nest prints.
  @Module({ imports: [ConfigModule.forRoot(config), LoggerModule.forRoot(createRootLogger('error', 2)), StorageModule, AuthModule] })
  class CliModule {}
  const app = await NestFactory.createApplicationContext(CliModule, { logger: false, abortOnError: false });
  try {
    const users = app.get(UsersService);
    const apiKeys = app.get(ApiKeyService);
    switch (command) {
      case 'user:create': {
        const { user, issued } = await users.create({
          name: newUser!.name,
          email: newUser!.email ?? null,
          isAdmin: newUser!.isAdmin ?? false,
        });
        return { user: userView(user), apiKey: issuedKeyView(issued) };
      }
      case 'key:create': {
        const user = await users.get(required(flag('user'), 'user'));
        return issuedKeyView(await apiKeys.issue(user.id, newKey!.name ?? 'cli'));
      }
      case 'key:revoke': {
        const store = app.get(UserStore);
        const keyId = required(flag('key'), 'key');
        const key = await store.getApiKey(keyId);
        if (!key) throw AppError.notFound('API key', keyId);
        // Revoked before: said so, with when, rather than as though this call revoked it.
        if (key.revokedAt) return { id: keyId, revoked: true, alreadyRevokedAt: key.revokedAt.toISOString() };
        await apiKeys.revoke(key.userId, keyId);
        return { id: keyId, revoked: true };
      }
      case 'keys:list': {
        const user = await users.get(required(flag('user'), 'user'));
        return { items: (await apiKeys.list(user.id)).map(apiKeyView) };
      }
      case 'users:list': {
        // Every user, a page at a time.
        const items: ReturnType<typeof userView>[] = [];
        for (let total = Infinity; items.length < total;) {
          const page = await users.list({ offset: items.length, limit: MAX_PAGE_SIZE });
          items.push(...page.items.map(userView));
          total = page.items.length ? page.total : items.length;
        }
        return { items, total: items.length };
      }
    }
    throw new UsageError(`Unknown command: ${command}`);
  } finally {
    await app.close();
  }
}

/** A message as the terminal shows it: control characters an argument carried (escape sequences) shown as `?`. */
const printable = (message: string): string => message.replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, '?');

/** Errors of the store or the system (SQLite's, a file's, MongoDB's) carry a code: their message says it all. */
const hasCode = (error: unknown): boolean => typeof (error as { code?: unknown } | null)?.code === 'string';

// A reader that stops early (`| head`) closes the pipe: nothing more to say to it.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

run(process.argv.slice(2)).then(
  (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
  (error: unknown) => {
    if (error instanceof HelpAsked) return void process.stderr.write(`${USAGE}\n`);
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message ? `${printable(error.message)}\n\n` : ''}${USAGE}\n`);
    } else if (error instanceof ConfigError || isAppError(error) || error instanceof TypeError || hasCode(error)) {
      process.stderr.write(`${printable((error as Error).message)}\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = 1;
  },
);
