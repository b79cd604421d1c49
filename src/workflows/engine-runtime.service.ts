import { Inject, Injectable, OnApplicationShutdown, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import { SafeFetch } from '../common/safe-fetch';
import { AppConfig } from '../config/app-config';
import { ChatCompletionsDecider } from '../engine/ai-decide/chat-completions-decider.adapter';
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
  /** AI Decide's model client; only with LLM_URL. */
  readonly decider?: ChatCompletionsDecider;

  constructor(
    config: AppConfig,
    @Inject(RUNS_LOGGER) logger: Logger,
    @Optional() collections?: NodeCollectionsProvider,
  ) {
    this.expressions = ExpressionEngine.fromConfig(config);
    this.fetcher = SafeFetch.fromConfig(config);
    this.decider = config.LLM_URL ? new ChatCompletionsDecider({ url: config.LLM_URL, apiKey: config.LLM_API_KEY, model: config.LLM_MODEL }) : undefined;
    this.executor = new WorkflowExecutor({
      expressions: this.expressions,
      fetcher: this.fetcher,
      collections: collections ?? new UnavailableCollectionsProvider(),
      decider: this.decider,
      logger,
      runTimeoutMs: config.RUN_TIMEOUT_MS,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.decider?.close();
    await Promise.allSettled([this.expressions.close(), this.fetcher.close()]);
  }
}
