import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import type { Logger } from 'pino';
import { AppError, ErrorCode } from '../common/app-error';
import { sendError } from '../common/http-error.filter';

export const CONSOLE_PATH = '/console';

const COMPILED = __dirname.split(sep).includes('dist');
/** `dist/console`, whether this file runs compiled (dist/src/common) or from sources under jest. */
export const CONSOLE_DIR = COMPILED ? resolve(__dirname, '..', '..', 'console') : resolve(__dirname, '..', '..', 'dist', 'console');

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * Everything the page loads comes from this origin: no CDN, no inline script. The console calls
 * only the API beside it. The key it holds in sessionStorage is what an injected script would
 * be after, hence a policy this strict.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  type: string;
}

interface ConsoleFiles {
  index: Buffer;
  assets: Map<string, Asset>;
}

/** Reads the built console once. Null when it was not built (the routes then say how to build it). */
export function loadConsoleFiles(dir: string = CONSOLE_DIR): ConsoleFiles | null {
  const indexFile = join(dir, 'index.html');
  if (!existsSync(indexFile)) return null;
  const assets = new Map<string, Asset>();
  const assetsDir = join(dir, 'assets');
  if (existsSync(assetsDir)) {
    for (const name of readdirSync(assetsDir)) {
      const type = TYPES[extname(name)];
      if (type) assets.set(name, { body: readFileSync(join(assetsDir, name)), type });
    }
  }
  return { index: readFileSync(indexFile), assets };
}

/**
 * The web console at /console: a single-page app whose client-side routes (/console/runs/...)
 * all answer its index.html, and whose assets, named by content hash, never change. The routes
 * are registered on fastify directly, like the API docs: they are public (the page signs in by
 * calling the API with a key), and they stay out of the OpenAPI document.
 */
export function setupWebConsole(app: NestFastifyApplication, logger: Logger, files: ConsoleFiles | null = loadConsoleFiles()): void {
  const fastify = app.getHttpAdapter().getInstance();
  const notBuilt = new AppError(ErrorCode.UNAVAILABLE, 'The web console is not built: run npm run build');
  if (!files) logger.warn({ dir: CONSOLE_DIR }, 'web console not built: /console answers 503 until npm run build');

  const page = (request: FastifyRequest, reply: FastifyReply) => {
    if (!files) return sendError(reply, request, notBuilt, logger);
    void reply
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(files.index);
  };

  fastify.get(CONSOLE_PATH, page);
  fastify.get(`${CONSOLE_PATH}/assets/:name`, (request, reply) => {
    const name = (request.params as { name: string }).name;
    const asset = files?.assets.get(name);
    if (!asset) return sendError(reply, request, AppError.notFound('console asset', name), logger);
    void reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .type(asset.type)
      .send(asset.body);
  });
  // Client-side routes. A path under assets/ that names no file is a 404 above, never the page:
  // a stale page asking for an old bundle must fail loudly, not parse HTML as JavaScript.
  fastify.get(`${CONSOLE_PATH}/*`, (request, reply) => {
    if ((request.params as { '*': string })['*'].startsWith('assets/')) {
      return sendError(reply, request, AppError.notFound('console asset', request.url), logger);
    }
    page(request, reply);
  });
}
