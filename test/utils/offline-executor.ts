import pino from 'pino';
import { UnavailableCollectionsProvider } from '../../src/engine/node-collections.port';
import type { ExpressionEngine } from '../../src/engine/expressions/expression-engine';
import { WorkflowExecutor } from '../../src/engine/workflow-executor';

/** An executor with no network, no collections and a silent log: what the executor's own specs run nodes on. */
export function offlineExecutor(expressions: ExpressionEngine): WorkflowExecutor {
  return new WorkflowExecutor({
    expressions,
    fetcher: { fetch: () => Promise.reject(new Error('no network in this test')) },
    collections: new UnavailableCollectionsProvider(),
    logger: pino({ level: 'silent' }),
    runTimeoutMs: 30_000,
  });
}
