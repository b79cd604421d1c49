import 'reflect-metadata';
import { createHttpApp, createWorkerContext } from './app.factory';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { assertDataDirWritable } from './config/data-dir';
import { closeOnSignals } from './common/graceful-shutdown';
import { createRootLogger } from './common/logger';

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
    const context = await createWorkerContext(config, logger);
    closeOnSignals(context, logger);
    logger.info({ role: config.APP_ROLE }, 'worker started');
    return;
  }
  const app = await createHttpApp(config, logger);
  closeOnSignals(app, logger);
  await app.listen(config.PORT, config.HOST);
  logger.info({ role: config.APP_ROLE, url: await app.getUrl() }, 'listening');
}

main().catch((error) => {
  process.stderr.write(`Fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
