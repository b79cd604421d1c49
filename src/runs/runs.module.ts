import { DynamicModule, Module, Provider } from '@nestjs/common';
import type { Logger } from 'pino';
import { AuthModule } from '../auth/auth.module';
import { RunCollectionsModule } from '../collections/run-collections.module';
import { ROOT_LOGGER } from '../common/logger';
import { OutboundHttpModule } from '../common/outbound-http.module';
import { SafeFetch } from '../common/safe-fetch';
import { SecretCipher } from '../common/secret-cipher';
import { SecretsModule } from '../common/secrets.module';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { CredentialsModule } from '../credentials/credentials.module';
import { ConversationStore } from '../domain/conversation-store.port';
import { ParameterDecider } from '../domain/parameter-decider.port';
import { EngineModule } from '../engine/engine.module';
import { ExpressionEngine } from '../engine/expressions/expression-engine';
import { IsolateCodeSandbox } from '../engine/expressions/isolate-code-sandbox.adapter';
import { NodeCollectionsProvider, UnavailableCollectionsProvider } from '../engine/node-collections.port';
import { NodeCredentials } from '../engine/node-credentials.port';
import { WorkflowExecutor } from '../engine/workflow-executor';
import { JobsModule } from '../jobs/jobs.module';
import { MetricsModule } from '../metrics/metrics.module';
import { LanguageModelsModule } from '../model-and-tool-servers/language-models.module';
import { OpenAiLanguageModels } from '../model-and-tool-servers/openai-compatible/openai-language-models.adapter';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { StorageModule } from '../storage/storage.module';
import { ActiveRuns } from './active-runs';
import { ApprovalLinks } from './approval-links';
import { ApprovalsController } from './approvals.controller';
import { ApprovalsService } from './approvals.service';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';
import { RunActors } from './run-actors';
import { RunAdmission } from './run-admission.service';
import { RunEvents } from './run-events';
import { RunPlans } from './run-plans';
import { RunWorker } from './run-worker.service';
import { RunsController } from './runs.controller';
import { RunsService } from './runs.service';
import { DEFAULT_RECONCILER_OPTIONS, RECONCILER_OPTIONS, RunsReconciler } from './runs-reconciler.service';
import { RunsPruner } from './runs-pruner.service';
import { Clock, DEFAULT_SCHEDULER_OPTIONS, SCHEDULER_OPTIONS, SystemClock, WorkflowScheduler } from './workflow-scheduler.service';

/** The executor over the engine, with the services a run gives its nodes (`ctx`). */
const executor: Provider = {
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
};

/** Executing runs exists only in processes that run workers (APP_ROLE all or worker). */
function workerProviders(config: AppConfig): Provider[] {
  return [
    executor,
    RunPlans,
    RunActors,
    RunWorker,
    RunsReconciler,
    {
      provide: RECONCILER_OPTIONS,
      // A lost worker's runs are found within about one lease after it expired.
      useValue: { ...DEFAULT_RECONCILER_OPTIONS, intervalMs: Math.min(DEFAULT_RECONCILER_OPTIONS.intervalMs, config.JOB_LEASE_MS) },
    },
    RunsPruner,
    WorkflowScheduler,
    { provide: Clock, useClass: SystemClock },
    { provide: SCHEDULER_OPTIONS, useValue: DEFAULT_SCHEDULER_OPTIONS },
  ];
}

/** What a worker's executor gives nodes beyond the engine: models, outbound HTTP, collections, credentials. */
const workerImports = (config: AppConfig) => [
  LanguageModelsModule,
  OutboundHttpModule,
  RunCollectionsModule.forRoot(config),
  CredentialsModule,
];

/**
 * Runs: the API that starts, reads, retries and cancels them (webhook, node tests, chat, approval
 * decisions), how a run is admitted (written, then enqueued), and in processes that run workers
 * the executor and the worker that runs `workflow.run` jobs, the reconciler, the pruner and the
 * scheduler. Workflow tools start runs through the RunsService it exports, and follow the
 * approvals a run waits at through its ApprovalsService.
 */
@Module({})
export class RunsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, RunsModule, () => ({
      module: RunsModule,
      imports: [
        EngineModule.forRoot(config),
        AuthModule,
        StorageModule,
        SecretsModule,
        RateLimitModule,
        JobsModule.forRoot(config),
        MetricsModule.forRoot(config),
        ...(config.runsWorkers ? workerImports(config) : []),
      ],
      controllers: [RunsController, ChatController, ApprovalsController],
      providers: [
        ActiveRuns,
        RunEvents,
        RunAdmission,
        RunsService,
        ChatService,
        ApprovalsService,
        {
          provide: ApprovalLinks,
          inject: [SecretCipher, AppConfig],
          useFactory: (cipher: SecretCipher, config: AppConfig) => new ApprovalLinks(cipher, config.publicUrl),
        },
        ...(config.runsWorkers ? workerProviders(config) : []),
      ],
      exports: [RunsService, ApprovalsService],
    }));
  }
}
