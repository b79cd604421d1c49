import type { INestApplicationContext } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { ShutdownSignal } from './shutdown-signal';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
/** Past this, hooks that hang are abandoned: the queues' own grace periods are 10 s each. */
export const SHUTDOWN_DEADLINE_MS = 30_000;

/**
 * On SIGTERM or SIGINT: logs that shutdown starts, raises the ShutdownSignal (new requests are
 * refused, long waits answer at once), closes the application (queues and workers drain, then the
 * HTTP server and the stores close, in Nest's hook order), logs that it completed and how long it
 * took, and exits 0.
 * A repeated signal is ignored rather than taken as "force": Ctrl-C in a terminal reaches both
 * npm and node, and npm forwards it to node once more.
 */
export function closeOnSignals(
  app: INestApplicationContext,
  logger: Logger,
  options: {
    exit?: (code: number) => void;
    /** Stopped alongside the application, and waited for before the exit: the worker processes of `npm start`. */
    alongside?: () => Promise<void>;
  } = {},
): void {
  const { exit = (code) => process.exit(code), alongside = () => Promise.resolve() } = options;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    logger.info({ signal }, 'shutdown started');
    app.get(ShutdownSignal, { strict: false }).begin();
    const deadline = setTimeout(() => {
      logger.error({ signal, ms: ms() }, 'shutdown did not complete in time; exiting');
      exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    Promise.all([app.close(), alongside()]).then(
      () => {
        clearTimeout(deadline);
        logger.info({ signal, ms: ms() }, 'shutdown complete');
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(deadline);
        logger.error({ signal, ms: ms(), err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
}
