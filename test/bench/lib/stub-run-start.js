// Preload of the webhook-door bench: RunsService.start answers at once, as if the run were queued,
// so the CPU the service uses per call is the HTTP door's alone (socket, Fastify, Nest, the key
// check, validation, the answer) and not the store's nor the queue's. Loads the build the main
// script belongs to (node -r <this> <root>/dist/src/main.js).
const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');

const main = process.argv[1];
const load = createRequire(main);
load('reflect-metadata');
const { RunsService } = load(join(dirname(main), 'runs', 'runs.service.js'));
RunsService.prototype.start = async function start(_principal, workflowId, { runType }) {
  const runId = 'run_0123456789abcdefghijklmno';
  return { created: true, body: { id: runId, runId, workflowId, runType, status: 'queued' } };
};
