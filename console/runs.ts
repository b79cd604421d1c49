import { api } from './api-client';
import type { Accepted, RunSummary, RunTrigger } from './api-types';

/**
 * Starts a run through the workflow's webhook, as any caller would, saying it comes from the
 * console: the server records `trigger: 'console'` from `x-run-source`.
 */
export function startRun(workflowBase: string, runType: 'test' | 'production', input: unknown): Promise<Accepted> {
  return api<Accepted>('POST', `${workflowBase}/runs`, {
    body: { runType, ...(input !== undefined ? { input } : {}) },
    headers: { 'x-run-source': 'console' },
  });
}

const TRIGGER_LABELS: Record<RunTrigger, string> = {
  webhook: 'webhook',
  console: 'console',
  schedule: 'schedule',
  mcp: 'MCP tool',
  retry: 'retry',
  'error-workflow': 'error workflow',
  'sub-workflow': 'sub-workflow',
  'node-test': 'node test',
  chat: 'chat',
};

/** How a run started, in words; "—" while the server does not say (older servers, older runs). */
export const triggerLabel = (run: Pick<RunSummary, 'trigger'>): string =>
  run.trigger ? (TRIGGER_LABELS[run.trigger] ?? run.trigger) : '—';

/** The run's duration: the server's figure, else from its start and end, else null (not finished). */
export function runDuration(run: Pick<RunSummary, 'durationMs' | 'startedAt' | 'finishedAt'>): number | null {
  if (typeof run.durationMs === 'number') return run.durationMs;
  if (!run.startedAt || !run.finishedAt) return null;
  const ms = Date.parse(run.finishedAt) - Date.parse(run.startedAt);
  return Number.isFinite(ms) && ms >= 0 ? ms : null;
}
