import 'reflect-metadata';
import { createHttpApp, createWorkerContext } from './app.factory';
import { AppConfig, ConfigError, inheritedEnvironment, loadConfig } from './config/app-config';
import { assertDataDirWritable } from './config/data-dir';
import { closeOnSignals } from './common/graceful-shutdown';
import { createRootLogger } from './common/logger';
import { ReadinessRegistry } from './health/readiness.registry';
import { joinSupervisor, reportReady, SUPERVISED_WORKER_ARG, WorkerProcesses } from './worker-processes';
import { UserStore } from './domain/user-store.port';
import { Metrics } from './metrics/metrics.service';
import { CONSOLE_PATH } from './web-console/web-console';

/** A bad environment or an unusable DATA_DIR stops the boot with one message, not a stack trace. */
function configOrExit(): AppConfig {
  try {
    const config = loadConfig();
    assertDataDirWritable(config);
    return config;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const config = configOrExit();
  const logger = createRootLogger(config.LOG_LEVEL);
  if (config.APP_ROLE === 'worker') {
    const supervised = process.argv.includes(SUPERVISED_WORKER_ARG);
    if (supervised) joinSupervisor(logger, config.WORKERS_NICE);
    const context = await createWorkerContext(config, logger);
    closeOnSignals(context, logger);
    if (supervised) reportReady(() => context.get(Metrics).workMetrics());
    logger.info({ role: config.APP_ROLE, supervised }, 'worker started');
    return;
  }
  if (config.APP_ROLE === 'all') config.superviseWorkers(config.WORKERS - 1);
  const app = await createHttpApp(config, logger);
  // The store is open and migrated: the worker processes boot onto it (APP_ROLE=all, WORKERS > 1).
  const workers = config.supervisedWorkers > 0 ? new WorkerProcesses(config.supervisedWorkers, inheritedEnvironment(), logger) : undefined;
  if (workers) {
    app
      .get(ReadinessRegistry)
      .register({ name: 'workers', check: async () => ({ processes: 1 + workers.status().ready, of: config.WORKERS }) });
    // Its /metrics counts the runs and files the worker processes handled too.
    app.get(Metrics).addWorkOf(() => workers.workMetrics());
    workers.start();
  }
  closeOnSignals(app, logger, { alongside: () => workers?.stop() ?? Promise.resolve() });
  // Counted before listening, so both lines below are written together once the port is open.
  const firstStart = (await app.get(UserStore).countUsers()) === 0;
  await app.listen(config.PORT, config.HOST);
  const url = await app.getUrl();
  logger.info({ role: config.APP_ROLE, url, workers: config.APP_ROLE === 'api' ? 0 : workers ? config.WORKERS : 1 }, 'listening');
  if (firstStart) {
    const consoleUrl = `${config.PUBLIC_URL ? config.publicUrl : url}${CONSOLE_PATH}`;
    logger.info(
      { console: consoleUrl },
      `no user yet: create the first admin with \`npm run -s cli -- user:create --name <name> --admin\` (it prints the API key once), then sign in to the console at ${consoleUrl}`,
    );
  }
}

main().catch((error) => {
  process.stderr.write(`Fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
