// Workflows the run benches share (the same definitions measured by control-flow and runs-cpu), and the service they run on.

const post = (upstreamUrl: string) => ({
  id: 'call',
  type: 'http-request',
  parameters: { method: 'POST', url: `${upstreamUrl}/hello`, body: '{"text": input.query, "top_k": "5"}' },
  parameterMode: { body: 'expression' },
});

/** The service as `npm start` runs it: WORKERS unset (one process per core, the first serving the API), default settings. */
const NPM_START_ENV = {
  APP_ROLE: 'all',
  FETCH_ALLOWED_HOSTS: '127.0.0.1',
  SWAGGER_ENABLED: 'false',
};

/** The queued-run limits off: the accept rate outruns the workers, and the backlog a round leaves is what is measured, not a refusal. */
const LIMITS_OFF = {
  RUNS_MAX_QUEUED: '0',
  RUNS_MAX_QUEUED_PER_WORKFLOW: '0',
  RUNS_MAX_QUEUED_PER_USER: '0',
};

/** The default layout as runs-cpu measures it beside one process. */
export const DEFAULT_LAYOUT_RUNS_ENV = { ...NPM_START_ENV, ...LIMITS_OFF };

/**
 * One process (WORKERS=1) with default settings, so that what a run costs is not shared with a
 * second process on the store; fair-runs measures it so, with the default queued-run limits.
 */
export const ONE_PROCESS_ENV = { ...NPM_START_ENV, WORKERS: '1' };

/** One process without the queued-run limits (runs-cpu, commits, run-statements). */
export const ONE_PROCESS_RUNS_ENV = { ...ONE_PROCESS_ENV, ...LIMITS_OFF };

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
