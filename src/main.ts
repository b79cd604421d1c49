import 'reflect-metadata';
import { createHttpApp, createWorkerContext } from './app.factory';
import { ConfigError, loadConfig } from './config/app-config';
import { createRootLogger } from './common/logger';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createRootLogger(config.LOG_LEVEL);
  if (config.APP_ROLE === 'worker') {
    await createWorkerContext(config, logger);
    logger.info({ role: config.APP_ROLE }, 'worker started');
    return;
  }
  const app = await createHttpApp(config, logger);
  await app.listen(config.PORT, config.HOST);
  logger.info({ role: config.APP_ROLE, url: await app.getUrl() }, 'listening');
}

main().catch((error) => {
  process.stderr.write(`Fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
