import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { AppError, ErrorCode } from '../common/app-error';
import { errorResponse, logServerError, toAppError } from '../common/http-error.filter';
import { newId } from '../common/ids';
import { ROOT_LOGGER } from '../common/logger';
import { AppConfig } from '../config/app-config';
import { Metrics } from '../metrics/metrics.service';
import { HealthService } from './health.service';

/** A probe or a scrape is answered in well under this; anything slower is cut off. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * A worker process (APP_ROLE=worker) has no API server, so this small one answers what an
 * orchestrator and Prometheus need, on WORKER_HEALTH_PORT: `/health` (liveness), `/health/ready`
 * (the API's readiness checks: store, queue, index) and `/metrics` (when METRICS_ENABLED), with
 * the API's bodies and error shape. Anything else is a 404.
 */
@Injectable()
export class WorkerHealthServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: Server;
  private readonly logger: Logger;

  constructor(
    private readonly config: AppConfig,
    private readonly health: HealthService,
    private readonly metrics: Metrics,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'worker-health' });
  }

  /** The port it listens on (tests start workers with port 0 taken as "off", so they pick one). */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.APP_ROLE !== 'worker' || this.config.WORKER_HEALTH_PORT === 0) return;
    const server = createServer((request, response) => void this.answer(request, response));
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    server.headersTimeout = REQUEST_TIMEOUT_MS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new Error(
                `WORKER_HEALTH_PORT ${this.config.WORKER_HEALTH_PORT} is taken (another worker on this machine?): give each worker its own WORKER_HEALTH_PORT, or 0 for none`,
              )
            : error,
        ),
      );
      server.listen(this.config.WORKER_HEALTH_PORT, this.config.HOST, () => {
        server.removeAllListeners('error');
        resolve();
      });
    });
    this.server = server;
    this.logger.info({ host: this.config.HOST, port: this.port }, 'worker health listening');
  }

  /** After the queue stopped (JobsModule, onModuleDestroy): a draining worker still answers its probes. */
  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = newId('req');
    const method = request.method ?? 'GET';
    const path = (request.url ?? '/').split('?')[0];
    response.setHeader('x-request-id', requestId);
    try {
      if (method !== 'GET' && method !== 'HEAD') {
        throw new AppError(ErrorCode.METHOD_NOT_ALLOWED, `${method} is not allowed on ${path}`, { details: { allow: ['GET', 'HEAD'] } });
      }
      if (path === '/health') return send(response, 200, 'application/json; charset=utf-8', JSON.stringify(this.health.live()));
      if (path === '/health/ready')
        return send(response, 200, 'application/json; charset=utf-8', JSON.stringify(await this.health.ready()));
      if (path === '/metrics' && this.config.METRICS_ENABLED)
        return send(response, 200, this.metrics.contentType, await this.metrics.render());
      throw new AppError(ErrorCode.NOT_FOUND, `No route for ${method} ${path}`);
    } catch (exception) {
      const error = toAppError(exception, method, path);
      logServerError(this.logger, error, requestId);
      const { status, headers, body } = errorResponse(error, requestId);
      send(response, status, 'application/json; charset=utf-8', JSON.stringify(body), headers);
    }
  }
}

function send(response: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}
