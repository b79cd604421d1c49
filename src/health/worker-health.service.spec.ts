import { ServiceUnavailableException } from '@nestjs/common';
import pino from 'pino';
import { freePort } from '../../test/utils/processes';
import { AppConfig } from '../config/app-config';
import { Metrics } from '../metrics/metrics.service';
import { HealthService } from './health.service';
import { WorkerHealthServer } from './worker-health.service';

/** The worker's own small HTTP server, spoken to over HTTP: its refusals are the API's error answers. */
describe('WorkerHealthServer', () => {
  let server: WorkerHealthServer;
  let url: string;
  let ready: () => Promise<unknown>;

  beforeAll(async () => {
    const port = await freePort();
    const config = { APP_ROLE: 'worker', WORKER_HEALTH_PORT: port, HOST: '127.0.0.1', METRICS_ENABLED: true } as AppConfig;
    const health = { live: () => ({ status: 'ok' }), ready: () => ready() } as unknown as HealthService;
    server = new WorkerHealthServer(config, health, new Metrics(), pino({ level: 'silent' }));
    await server.onApplicationBootstrap();
    url = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await server?.onApplicationShutdown();
  });

  it('refuses another method with 405, the Allow header and the one error body', async () => {
    const res = await fetch(`${url}/health`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await res.json()).toEqual({
      code: 'METHOD_NOT_ALLOWED',
      message: 'POST is not allowed on /health',
      details: { allow: ['GET', 'HEAD'] },
      requestId: res.headers.get('x-request-id'),
    });
  });

  it('answers 503 with the readiness result when a dependency is down', async () => {
    const result = { status: 'error', error: { queue: { status: 'down', message: 'connection refused' } } };
    ready = () => Promise.reject(new ServiceUnavailableException(result));
    const res = await fetch(`${url}/health/ready`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 'UNAVAILABLE', details: result, requestId: res.headers.get('x-request-id') });
  });

  it('says nothing internal on a 500', async () => {
    ready = () => Promise.reject(new Error('password=hunter2 in the connection string'));
    const res = await fetch(`${url}/health/ready`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('hunter2');
    expect(JSON.parse(text)).toEqual({ code: 'INTERNAL', message: 'Internal server error', requestId: res.headers.get('x-request-id') });
  });
});
