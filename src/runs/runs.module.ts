import { DynamicModule, Module, Provider } from '@nestjs/common';
import { SecretsModule } from '../common/secrets.module';
import { AppConfig } from '../config/app-config';
import { EngineModule } from '../engine/engine.module';
import { ActiveRuns } from './active-runs';
import { RunActors } from './run-actors';
import { RunAdmission } from './run-admission.service';
import { RunEvents } from './run-events';
import { RunPlans } from './run-plans';
import { RunWorker } from './run-worker.service';
import { DEFAULT_RECONCILER_OPTIONS, RECONCILER_OPTIONS, RunsReconciler } from './runs-reconciler.service';
import { RunsPruner } from './runs-pruner.service';
import { Clock, DEFAULT_SCHEDULER_OPTIONS, SCHEDULER_OPTIONS, SystemClock, WorkflowScheduler } from './workflow-scheduler.service';

/** Executing runs exists only in processes that run workers (APP_ROLE all or worker). */
function workerProviders(config: AppConfig): Provider[] {
  return [
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

const built = new WeakMap<AppConfig, DynamicModule>();

/**
 * The run-time: how a run is admitted (written, then enqueued), and in processes that run
 * workers the worker that executes `workflow.run` jobs, the reconciler, the pruner and the scheduler. The
 * workflows API starts, waits for and cancels runs through what it exports.
 */
@Module({})
export class RunsModule {
  static forRoot(config: AppConfig): DynamicModule {
    let module = built.get(config);
    if (!module) {
      module = {
        module: RunsModule,
        imports: [EngineModule.forRoot(config), SecretsModule],
        providers: [ActiveRuns, RunEvents, RunAdmission, ...(config.runsWorkers ? workerProviders(config) : [])],
        exports: [ActiveRuns, RunEvents, RunAdmission],
      };
      built.set(config, module);
    }
    return module;
  }
}
