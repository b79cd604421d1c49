// Workflows the run benches share (the same definitions measured by control-flow and runs-cpu), and the service they run on.

const post = (upstreamUrl: string) => ({
  id: 'call',
  type: 'http-request',
  parameters: { method: 'POST', url: `${upstreamUrl}/hello`, body: '{"text": input.query, "top_k": "5"}' },
  parameterMode: { body: 'expression' },
});

/**
 * The service as `npm start` runs it (WORKERS unset: one process per core, the first serving the
 * API) with default settings, but for the queued-run limits: the accept rate outruns the workers,
 * and the backlog a round leaves is what the run benches measure, not a refusal.
 */
export const DEFAULT_LAYOUT_RUNS_ENV = {
  APP_ROLE: 'all',
  FETCH_ALLOWED_HOSTS: '127.0.0.1',
  SWAGGER_ENABLED: 'false',
  RUNS_MAX_QUEUED: '0',
  RUNS_MAX_QUEUED_PER_WORKFLOW: '0',
  RUNS_MAX_QUEUED_PER_USER: '0',
};

/**
 * The service as the run benches measure one process (runs-cpu, commits, run-statements): the
 * default layout's settings in one process (WORKERS=1), so that what a run costs is not shared
 * with a second process on the store; runs-cpu measures the default layout beside it.
 */
export const ONE_PROCESS_RUNS_ENV = { ...DEFAULT_LAYOUT_RUNS_ENV, WORKERS: '1' };

/** webhook -> set: the cheapest run that does something. */
export const webhookSet = () => ({
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    {
      id: 'shape',
      type: 'set',
      runMode: 'input',
      parameters: { fields: { source: 'bench', 'meta.kind': 'question' }, remove: ['collection'] },
    },
  ],
  edges: [{ from: 'trigger', to: 'shape' }],
});

/** webhook -> http-request (POST to `upstreamUrl`/hello). */
export const twoNodes = (upstreamUrl: string) => ({
  nodes: [{ id: 'trigger', type: 'webhook-trigger', parameters: {} }, post(upstreamUrl)],
  edges: [{ from: 'trigger', to: 'call' }],
});

/** webhook -> if -> set -> http-request (POST to `upstreamUrl`/hello); the if's false branch stops with an error. */
export const branching = (upstreamUrl: string) => ({
  nodes: [
    { id: 'trigger', type: 'webhook-trigger', parameters: {} },
    {
      id: 'check',
      type: 'if',
      runMode: 'input',
      parameters: { condition: 'input.query.length > 3' },
      parameterMode: { condition: 'expression' },
    },
    {
      id: 'shape',
      type: 'set',
      runMode: 'input',
      parameters: { fields: { source: 'bench', 'meta.kind': 'question' }, remove: ['collection'] },
    },
    post(upstreamUrl),
    { id: 'short', type: 'stop-and-error', parameters: { message: 'query too short' } },
  ],
  edges: [
    { from: 'trigger', to: 'check' },
    { from: 'check', to: 'shape', output: 'true' },
    { from: 'check', to: 'short', output: 'false' },
    { from: 'shape', to: 'call' },
  ],
});
