import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ParameterDecider } from '../domain/parameter-decider.port';
import { ChatCompletionsDecider } from './openai-compatible/chat-completions-decider.adapter';
import { OpenAiLanguageModels } from './openai-compatible/openai-language-models.adapter';

const LLM_OPTIONS = (config: AppConfig) => ({ url: config.LLM_URL!, apiKey: config.LLM_API_KEY, model: config.LLM_MODEL });

/**
 * The service's configured language model (LLM_URL): `ctx.models` of nodes and AI Decide's
 * parameter decider. Both are null when no model is configured.
 */
@Module({
  providers: [
    {
      provide: ParameterDecider,
      inject: [AppConfig],
      useFactory: (config: AppConfig): ParameterDecider | null => (config.LLM_URL ? new ChatCompletionsDecider(LLM_OPTIONS(config)) : null),
    },
    {
      provide: OpenAiLanguageModels,
      inject: [AppConfig],
      useFactory: (config: AppConfig): OpenAiLanguageModels | null =>
        config.LLM_URL ? new OpenAiLanguageModels(LLM_OPTIONS(config)) : null,
    },
  ],
  exports: [ParameterDecider, OpenAiLanguageModels],
})
export class LanguageModelsModule implements OnApplicationShutdown {
  constructor(
    @Inject(ParameterDecider) private readonly decider: ParameterDecider | null,
    @Inject(OpenAiLanguageModels) private readonly models: OpenAiLanguageModels | null,
  ) {}

  /** After the queue stopped its handlers (JobsModule closes it in onModuleDestroy). */
  onApplicationShutdown(): void {
    if (this.decider instanceof ChatCompletionsDecider) this.decider.close();
    this.models?.close();
  }
}
