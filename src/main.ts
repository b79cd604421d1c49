import 'reflect-metadata';
import { createHttpApp, createWorkerContext } from './app.factory';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { assertDataDirWritable } from './config/data-dir';
import { closeOnSignals } from './common/graceful-shutdown';
import { createRootLogger } from './common/logger';
import { ReadinessRegistry } from './health/readiness.registry';
import { joinSupervisor, reportReady, SUPERVISED_WORKER_ARG, WorkerProcesses } from './worker-processes';

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
    if (supervised) joinSupervisor(logger);
    const context = await createWorkerContext(config, logger);
    closeOnSignals(context, logger);
    if (supervised) reportReady();
    logger.info({ role: config.APP_ROLE, supervised }, 'worker started');
    return;
  }
  const app = await createHttpApp(config, logger);
  // The store is open and migrated: the worker processes boot onto it (APP_ROLE=all, WORKERS > 1).
  const workers =
    config.APP_ROLE === 'all' && config.WORKERS > 1 ? new WorkerProcesses(config.WORKERS - 1, process.env, logger) : undefined;
  if (workers) {
    app
      .get(ReadinessRegistry)
      .register({ name: 'workers', check: async () => ({ processes: 1 + workers.status().ready, of: config.WORKERS }) });
    workers.start();
  }
  closeOnSignals(app, logger, { alongside: () => workers?.stop() ?? Promise.resolve() });
  await app.listen(config.PORT, config.HOST);
  logger.info(
    { role: config.APP_ROLE, url: await app.getUrl(), workers: config.APP_ROLE === 'api' ? 0 : workers ? config.WORKERS : 1 },
    'listening',
  );
}

main().catch((error) => {
  process.stderr.write(`Fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
