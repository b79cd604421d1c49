import { Injectable } from '@nestjs/common';
import { HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { ReadinessRegistry } from './readiness.registry';

const CHECK_TIMEOUT_MS = 3000;

/** Liveness and readiness, for the API's /health routes and the worker's health port alike. */
@Injectable()
export class HealthService {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly readiness: ReadinessRegistry,
  ) {}

  live() {
    return { status: 'ok' };
  }

  /**
   * Every registered dependency (store, queue, index) answers within its time limit. When one
   * does not, throws terminus's ServiceUnavailableException carrying the same result.
   */
  ready(): Promise<HealthCheckResult> {
    return this.health.check(
      this.readiness.list().map(({ name, check }) => async () => {
        const indicator = this.indicators.check(name);
        try {
          const details = await withTimeout(check(), CHECK_TIMEOUT_MS);
          return details ? indicator.up(details) : indicator.up();
        } catch (error) {
          return indicator.down({ message: error instanceof Error ? error.message : String(error) });
        }
      }),
    );
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
