import multipart from '@fastify/multipart';
import { INestApplicationContext } from '@nestjs/common';
import { FastifyError, FastifyReply, FastifyRequest, LogController } from 'fastify';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { setupApiDocs } from './common/api-docs';
import { AppError } from './common/app-error';
import { HttpErrorFilter, sendError } from './common/http-error.filter';
import { newId } from './common/ids';
import { parseBodies, refuseUnsupportedMediaTypes } from './common/media-types';
import { createRootLogger, PinoNestLogger } from './common/logger';
import { RouteRegistry } from './common/route-registry';
import { createValidationPipe } from './common/validation';
import { ShutdownSignal } from './common/shutdown-signal';
import { setupWebConsole } from './web-console/web-console';
import { setupApprovalPages, withoutApprovalToken } from './runs/approval-pages';
import { Metrics } from './metrics/metrics.service';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the HTTP application (roles `all` and `api`) without listening, so tests can pick the port. */
export async function createHttpApp(config: AppConfig, logger: Logger = createRootLogger(config.LOG_LEVEL)) {
  const routes = new RouteRegistry();
  const adapter = new FastifyAdapter({
    loggerInstance: logger,
    // One line per request is written by the onResponse hook below, not fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Errors fastify raises before routing (a malformed escape in the path, `/api/%E0`) get the
    // service's error body too, not fastify's own.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      void reply.header('x-request-id', request.id);
      sendError(
        reply,
        request,
        AppError.validation([{ field: 'url', reason: error.message }], `Malformed request: ${error.message}`),
        logger,
      );
    },
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : newId('req');
    },
  });
  const fastify = adapter.getInstance();
  refuseUnsupportedMediaTypes(fastify);
  parseBodies(fastify);
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url));
  // Set once the application exists; requests only arrive after that.
  const late: { shutdown?: ShutdownSignal; metrics?: Metrics } = {};
  // Callback-style hooks: they run on every request, and async ones cost a promise each.
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // Stopping: what runs drains, what comes in is sent elsewhere (a load balancer retries a 503).
    if (late.shutdown?.stopping) {
      reply.header('connection', 'close');
      return done(late.shutdown.signal.reason as Error);
    }
    done();
  });
  const logRequests = logger.isLevelEnabled('info');
  fastify.addHook('onResponse', (request, reply, done) => {
    // The route pattern, not the URL: one series per route whatever the ids in the path.
    late.metrics?.httpRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    if (logRequests) {
      request.log.info(
        { method: request.method, url: withoutApprovalToken(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
        'request',
      );
    }
    done();
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, logger), adapter, {
    logger: new PinoNestLogger(logger),
    bufferLogs: false,
    // JSON bodies are parsed by parseBodies (media-types.ts), which says why one is refused;
    // Nest's own parsers would replace it (and add a form parser no route takes).
    bodyParser: false,
  });
  // One file per upload, capped while it streams in; the file part is the only large one.
  await app.register(multipart, { limits: { fileSize: config.MAX_FILE_BYTES, files: 1, fields: 5, fieldSize: 64 * 1024 } });
  app.useGlobalFilters(new HttpErrorFilter(logger, routes));
  app.useGlobalPipes(createValidationPipe());
  if (config.METRICS_ENABLED) late.metrics = app.get(Metrics);
  const shutdown = app.get(ShutdownSignal);
  late.shutdown = shutdown;
  // Kept-alive connections with no request in progress are closed the moment the stop begins, not
  // when the server closes after the drain: a client's next request then opens a new connection
  // and hears 503 with `Connection: close` (above), instead of being written into a connection
  // the server is about to drop (a reset, after which the caller cannot tell what happened).
  shutdown.signal.addEventListener('abort', () => fastify.server.closeIdleConnections(), { once: true });

  if (config.SWAGGER_ENABLED) setupApiDocs(app);
  setupWebConsole(app, logger);
  setupApprovalPages(app, logger);
  return app;
}

/**
 * Builds a process that only runs background work (role `worker`): no API server, only the small
 * health and metrics server on WORKER_HEALTH_PORT (health/worker-health.service.ts).
 */
export async function createWorkerContext(
  config: AppConfig,
  logger: Logger = createRootLogger(config.LOG_LEVEL),
): Promise<INestApplicationContext> {
  const context = await NestFactory.createApplicationContext(AppModule.forRoot(config, logger), {
    logger: new PinoNestLogger(logger),
  });
  return context;
}
