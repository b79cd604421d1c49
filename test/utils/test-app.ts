import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpApp } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { createRootLogger } from '../../src/common/logger';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestUser {
  id: string;
  key: string;
}

export interface TestApp {
  app: NestFastifyApplication;
  url: string;
  dataDir: string;
  admin: TestUser;
  request<T = any>(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>;
  createUser(name: string): Promise<TestUser>;
  close(): Promise<void>;
}

export const BOOTSTRAP_KEY = 'wcs_test_bootstrap_key_0123456789';

/**
 * Starts the real application on 127.0.0.1 with a random port and a fresh DATA_DIR, speaking
 * real HTTP. `env` overrides configuration (e.g. REDIS_URL, FETCH_ALLOWED_HOSTS, or PORT with PUBLIC_URL).
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'wcs-test-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    EMBEDDING_THREADS: '1',
    ...env,
  });
  const app = await createHttpApp(config, createRootLogger(config.LOG_LEVEL));
  // A test that must know the address before the start (PUBLIC_URL) names the port; others take a random one.
  await app.listen(env.PORT ? Number(env.PORT) : 0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const request: TestApp['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? BOOTSTRAP_KEY : options.key;
    if (key !== null) headers['x-api-key'] = key;
    let body: string | Buffer | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed as any };
  };

  const me = await request('GET', '/api/v1/me');
  const admin = { id: me.body.id as string, key: BOOTSTRAP_KEY };

  return {
    app,
    url,
    dataDir,
    admin,
    request,
    async createUser(name: string) {
      const res = await request('POST', '/api/v1/users', { body: { name } });
      if (res.status !== 201) throw new Error(`createUser failed: ${res.status} ${JSON.stringify(res.body)}`);
      return { id: res.body.id, key: res.body.apiKey.key };
    },
    async close() {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
