import { Inject, Injectable, OnApplicationShutdown, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import { SafeFetch } from '../common/safe-fetch';
import { AppConfig } from '../config/app-config';
import { NodeCollectionsProvider, UnavailableCollectionsProvider } from '../engine/collections-provider';
import { ExpressionEngine } from '../engine/expressions/expression-engine';
import { WorkflowExecutor } from '../engine/workflow-executor';

export const RUNS_LOGGER = Symbol('RUNS_LOGGER');

/**
 * What executing runs needs and only workers build: the isolate pool, the outbound client and the
 * executor over them. Closed at application shutdown, after the queue stopped its handlers.
 */
@Injectable()
export class EngineRuntime implements OnApplicationShutdown {
  readonly expressions: ExpressionEngine;
  readonly fetcher: SafeFetch;
  readonly executor: WorkflowExecutor;

  constructor(
    config: AppConfig,
    @Inject(RUNS_LOGGER) logger: Logger,
    @Optional() collections?: NodeCollectionsProvider,
  ) {
    this.expressions = ExpressionEngine.fromConfig(config);
    this.fetcher = SafeFetch.fromConfig(config);
    this.executor = new WorkflowExecutor({
      expressions: this.expressions,
      fetcher: this.fetcher,
      collections: collections ?? new UnavailableCollectionsProvider(),
      logger,
      runTimeoutMs: config.RUN_TIMEOUT_MS,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([this.expressions.close(), this.fetcher.close()]);
  }
}
