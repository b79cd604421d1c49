import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { Public } from '../auth/principal';
import { ReadinessRegistry } from './readiness.registry';

const CHECK_TIMEOUT_MS = 3000;

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly readiness: ReadinessRegistry,
  ) {}

  /** Liveness: the process answers. */
  @Get()
  @ApiOkResponse({ schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] } })
  live() {
    return { status: 'ok' };
  }

  /** Readiness: every registered dependency answers within its time limit. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check(
      this.readiness.list().map(({ name, check }) => async () => {
        const indicator = this.indicators.check(name);
        try {
          await withTimeout(check(), CHECK_TIMEOUT_MS);
          return indicator.up();
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
