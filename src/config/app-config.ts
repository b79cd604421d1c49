// The validated configuration: AppConfig, the settings of app-settings.ts plus values derived from
// them, and loadConfig, which reads them from the environment and names every bad variable.
import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, ValidationError } from 'class-validator';
import { resolve } from 'node:path';
import { AppSettings } from './app-settings';

export type { AppRole } from './app-settings';

/** Variables whose values never appear in a configuration error. */
const SECRET_VARIABLES = new Set([
  'BOOTSTRAP_API_KEY',
  'SECRETS_KEY',
  'ELASTICSEARCH_API_KEY',
  'EMBEDDINGS_API_KEY',
  'LLM_API_KEY',
  'RERANK_API_KEY',
]);

/**
 * The typed, validated environment. This class is the only reader of process.env (through
 * `loadConfig`); everything else receives it by injection. Property names are the variable names.
 */
export class AppConfig extends AppSettings {
  /** Not a setting (so private, outside the variables listed in docs/configuration.md): see supervisedWorkers. */
  #supervisedWorkers = 0;

  /**
   * Worker processes this one starts and supervises (APP_ROLE=all, WORKERS above 1), as main.ts
   * said before building the app; never read from the environment, so an app built alone (tests,
   * the CLI) counts none whatever WORKERS says.
   */
  get supervisedWorkers(): number {
    return this.#supervisedWorkers;
  }

  superviseWorkers(count: number): void {
    this.#supervisedWorkers = Math.max(0, count);
  }

  get dataDir(): string {
    return resolve(this.DATA_DIR);
  }

  /** PUBLIC_URL without a trailing slash; by default this host's address on PORT. */
  get publicUrl(): string {
    if (this.PUBLIC_URL) return this.PUBLIC_URL.replace(/\/+$/, '');
    const host = ['0.0.0.0', '::', ''].includes(this.HOST) ? 'localhost' : this.HOST.includes(':') ? `[${this.HOST}]` : this.HOST;
    return `http://${host}:${this.PORT}`;
  }

  /** Workflow runs this process works on at once (beside the fair-share lane's as many again). */
  get runConcurrency(): number {
    return this.APP_ROLE === 'worker' ? this.WORKER_JOB_CONCURRENCY : this.JOB_CONCURRENCY;
  }

  get runsWorkers(): boolean {
    return this.APP_ROLE !== 'api';
  }

  /** Something keeps files in DATA_DIR: the SQLite store or index, blobs, or the generated secrets key. */
  get usesDataDir(): boolean {
    return !this.MONGODB_URI || !this.ELASTICSEARCH_URL || !this.SECRETS_KEY;
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

function describe(errors: ValidationError[]): string[] {
  return errors.flatMap((e) =>
    Object.values(e.constraints ?? {}).map((reason) => `${e.property}: ${reason} (got ${shown(e.property, e.value)})`),
  );
}

function shown(variable: string, value: unknown): string {
  if (SECRET_VARIABLES.has(variable) && typeof value === 'string') return `a value of ${value.length} characters`;
  if (/_(URL|URI)$/.test(variable) && typeof value === 'string') return JSON.stringify(withoutCredentials(value));
  return JSON.stringify(value);
}

/**
 * A connection string with whatever stands between `//` and its last `@` masked: a user and
 * password (`mongodb://admin:pw@db`, `redis://:pw@host`), even one with a raw `/`, `?` or `#` in
 * the password that ends the authority early to a URL parser, never reaches the error message and
 * the logs that keep it. An `@` later in the value only masks more than needed.
 */
function withoutCredentials(value: string): string {
  const start = value.indexOf('//') + 2;
  const at = value.lastIndexOf('@');
  return at < start ? value : `${value.slice(0, start)}***@${value.slice(at + 1)}`;
}

/** Validates the environment once. Throws ConfigError naming every bad variable and why. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const known = new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(AppConfig, '', true, false)
      .map((m) => m.propertyName),
  );
  const picked: Record<string, string> = {};
  for (const key of known) {
    const value = env[key];
    if (value !== undefined) picked[key] = value;
  }
  const config = plainToInstance(AppConfig, picked);
  const errors = validateSync(config, { forbidUnknownValues: false });
  if (errors.length) throw new ConfigError(describe(errors));
  return config;
}

/** The environment a worker process of this service inherits (the only place outside loading that reads process.env). */
export function inheritedEnvironment(): NodeJS.ProcessEnv {
  return { ...process.env };
}
