import { DynamicModule, Inject, Module, OnApplicationShutdown, Optional, Provider } from '@nestjs/common';
import type { Logger } from 'pino';
import { ApprovalLinks } from '../common/approval-links';
import { ROOT_LOGGER } from '../common/logger';
import { SecretsModule } from '../common/secrets.module';
import { SafeFetch } from '../common/safe-fetch';
import { AppConfig } from '../config/app-config';
import { ChatCompletionsDecider } from './ai-decide/openai-compatible/chat-completions-decider.adapter';
import { ParameterDecider } from './ai-decide/parameter-decider.port';
import { NodeCollectionsProvider, UnavailableCollectionsProvider } from './node-collections.port';
import { NodeCredentials } from './node-credentials.port';
import { ConversationStore } from '../storage/conversation-store.port';
import { ExpressionEngine } from './expressions/expression-engine';
import { IsolateCodeSandbox } from './expressions/isolate-code-sandbox.adapter';
import { OpenAiLanguageModels } from './language-models/openai-language-models.adapter';
import { NodeRegistry } from './node-registry';
import { BUILT_IN_PLUGINS, loadNodeRegistry } from './plugin-loader';
import { WorkflowExecutor } from './workflow-executor';

/** What executing runs needs; only processes that run workers build it (the isolates are not free). */
const executionProviders: Provider[] = [
  {
    provide: ExpressionEngine,
    inject: [AppConfig, ROOT_LOGGER],
    useFactory: (config: AppConfig, logger: Logger) => ExpressionEngine.fromConfig(config, logger.child({ component: 'sandbox' })),
  },
  {
    provide: ParameterDecider,
    inject: [AppConfig],
    useFactory: (config: AppConfig): ParameterDecider | null =>
      config.LLM_URL ? new ChatCompletionsDecider({ url: config.LLM_URL, apiKey: config.LLM_API_KEY, model: config.LLM_MODEL }) : null,
  },
  {
    provide: OpenAiLanguageModels,
    inject: [AppConfig],
    useFactory: (config: AppConfig): OpenAiLanguageModels | null =>
      config.LLM_URL ? new OpenAiLanguageModels({ url: config.LLM_URL, apiKey: config.LLM_API_KEY, model: config.LLM_MODEL }) : null,
  },
  {
    provide: WorkflowExecutor,
    inject: [
      AppConfig,
      ExpressionEngine,
      SafeFetch,
      ROOT_LOGGER,
      ParameterDecider,
      OpenAiLanguageModels,
      { token: NodeCollectionsProvider, optional: true },
      { token: NodeCredentials, optional: true },
      ApprovalLinks,
      { token: ConversationStore, optional: true },
    ],
    useFactory: (
      config: AppConfig,
      expressions: ExpressionEngine,
      fetcher: SafeFetch,
      logger: Logger,
      decider: ParameterDecider | null,
      models: OpenAiLanguageModels | null,
      collections: NodeCollectionsProvider | undefined,
      credentials: NodeCredentials | undefined,
      approvalLinks: ApprovalLinks,
      conversations: ConversationStore | undefined,
    ) =>
      new WorkflowExecutor({
        expressions,
        fetcher,
        collections: collections ?? new UnavailableCollectionsProvider(),
        credentials,
        conversations,
        decider: decider ?? undefined,
        models: models ?? undefined,
        sandbox: new IsolateCodeSandbox(expressions),
        approvalLinks,
        logger: logger.child({ component: 'runs' }),
        runTimeoutMs: config.RUN_TIMEOUT_MS,
      }),
  },
];

const built = new WeakMap<AppConfig, DynamicModule>();

/**
 * The workflow engine as providers: the node types loaded from `plugins/` and PLUGIN_PATHS (in
 * every role: definitions are checked where they are saved), and in processes that run workers
 * the expression sandbox, AI Decide's model client and the executor over them. Loading plugins
 * while the module is built makes a malformed plugin or a duplicate type@version stop the boot,
 * naming the file.
 */
@Module({})
export class EngineModule implements OnApplicationShutdown {
  /** One module per configuration, whoever imports it (the workflows API and the run-time): one registry, one sandbox pool. */
  static forRoot(config: AppConfig): DynamicModule {
    let module = built.get(config);
    if (!module) {
      const registry: Provider = {
        provide: NodeRegistry,
        inject: [ROOT_LOGGER],
        useFactory: (logger: Logger) => {
          const loaded = loadNodeRegistry([BUILT_IN_PLUGINS, ...config.PLUGIN_PATHS]);
          const nodes = loaded.list();
          const outside = nodes.filter((node) => !node.source.startsWith(BUILT_IN_PLUGINS));
          logger.child({ component: 'plugins' }).info(
            {
              count: nodes.length,
              types: nodes.map((node) => `${node.definition.type}@${node.definition.version}`),
              fromPluginPaths: outside.map((node) => node.source),
            },
            'node types loaded',
          );
          return loaded;
        },
      };
      const workers = config.runsWorkers;
      module = {
        module: EngineModule,
        imports: [SecretsModule],
        providers: [registry, ...(workers ? executionProviders : [])],
        exports: [NodeRegistry, ...(workers ? [ExpressionEngine, ParameterDecider, WorkflowExecutor] : [])],
      };
      built.set(config, module);
    }
    return module;
  }

  constructor(
    @Optional() private readonly expressions?: ExpressionEngine,
    @Optional() @Inject(ParameterDecider) private readonly decider?: ParameterDecider | null,
    @Optional() @Inject(OpenAiLanguageModels) private readonly models?: OpenAiLanguageModels | null,
  ) {}

  /** After the queue stopped its handlers (JobsModule closes it in onModuleDestroy). */
  async onApplicationShutdown(): Promise<void> {
    if (this.decider instanceof ChatCompletionsDecider) this.decider.close();
    this.models?.close();
    await this.expressions?.close();
  }
}
