import { INestApplicationContext } from '@nestjs/common';
import { createWorkerContext } from '../../src/app.factory';
import { createRootLogger } from '../../src/common/logger';
import { loadConfig } from '../../src/config/app-config';
import { RunEvents } from '../../src/runs/run-events';
import { BOOTSTRAP_KEY, startTestApp, TestApp } from '../utils/test-app';

/**
 * The split layout without Redis: an `APP_ROLE=api` app and an `APP_ROLE=worker` app on one SQLite
 * file, not linked (no notices pass between them; here two apps in one test process, each with its
 * own connection to the file). The API's waiters read the store on their own only after ten
 * minutes here, so unless the worker's commits wake them each wait lasts until its timeout: 30 s
 * for `?wait=30`, 120 s for a chat message. Each test allows half of that for all its waits, which
 * a run of a set node finishes in many times over on a loaded machine, and fails without the wake-up.
 */
describe('callers waiting in a process not linked to the one that runs the run (one SQLite file, no Redis)', () => {
  let api: TestApp;
  let worker: INestApplicationContext;

  beforeAll(async () => {
    api = await startTestApp({ APP_ROLE: 'api', REDIS_URL: '' });
    // Far beyond the waits below: without the wake-up, every wait would end at its timeout unanswered.
    api.app.get(RunEvents, { strict: false }).fallbackMs = 10 * 60_000;
    const config = loadConfig({
      APP_ROLE: 'worker',
      DATA_DIR: api.dataDir,
      BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
      REDIS_URL: '',
      WORKER_HEALTH_PORT: '0',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      EMBEDDING_THREADS: '1',
    });
    worker = await createWorkerContext(config, createRootLogger(config.LOG_LEVEL));
  }, 120_000);

  afterAll(async () => {
    await worker?.close();
    await api?.close();
  });

  async function publish(name: string, definition: object): Promise<string> {
    const created = await api.request('POST', '/api/v1/workflows', { body: { name, definition } });
    expect(created.status).toBe(201);
    expect((await api.request('POST', `/api/v1/workflows/${created.body.id}/publish`)).status).toBe(201);
    return created.body.id;
  }

  it('answers ?wait with the run the other process finished', async () => {
    const workflowId = await publish('unlinked wait', {
      nodes: [
        { id: 'trigger', type: 'webhook-trigger', parameters: {} },
        { id: 'shape', type: 'set', parameters: { fields: { done: true } } },
      ],
      edges: [{ from: 'trigger', to: 'shape' }],
    });
    // Four waits of up to 30 s each in a test given 60 s.
    for (let i = 0; i < 4; i++) {
      const answer = await api.request('POST', `/api/v1/workflows/${workflowId}/runs?wait=30`, { body: { input: { i } } });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id: expect.stringMatching(/^run_/), status: 'succeeded' });
    }
  }, 60_000);

  it('answers a chat message (JSON) with the run the other process finished', async () => {
    const workflowId = await publish('unlinked chat', {
      nodes: [
        { id: 'chat', type: 'chat-trigger', parameters: {} },
        { id: 'reply', type: 'set', parameters: { fields: { answer: 'heard' } } },
      ],
      edges: [{ from: 'chat', to: 'reply' }],
    });
    const answer = await api.request('POST', `/api/v1/workflows/${workflowId}/chat?stream=false`, {
      body: { sessionId: 's1', message: 'hello' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'succeeded', runId: expect.stringMatching(/^run_/) });
  }, 60_000);
});
