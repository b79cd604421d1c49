import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/principal';
import { Metrics } from './metrics.service';

/**
 * Prometheus scrapes without credentials, as it scrapes /health: the figures name routes and
 * counts, never data. METRICS_ENABLED=false removes the route. Not part of the API's contract,
 * so not in the OpenAPI document.
 */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @Get()
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const text = await this.metrics.render();
    void reply.type(this.metrics.contentType);
    return text;
  }
}
