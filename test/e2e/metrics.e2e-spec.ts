import { JobQueue } from '../../src/domain/job-queue.port';
import { JOB_NAMES } from '../../src/domain/job-names';
import { FakeEmbeddingsServer } from '../utils/fake-embeddings-server';
import { startTestApp, TestApp } from '../utils/test-app';
import { waitForRun } from '../utils/workflows-fixtures';
import { addNotes, createCollection, waitForFile } from './collections-files.helpers';

/** The value of one sample of the exposition, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics: Prometheus exposition of requests, runs, queues, ingestion and search', () => {
  let t: TestApp;
  let embeddings: FakeEmbeddingsServer;

  const scrape = async () => {
    const res = await fetch(`${t.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return res.text();
  };

  /** Scrapes until `seen` holds: the queue gauge shows a read at most a few seconds old. */
  const scrapeUntil = async (seen: (text: string) => boolean) => {
    for (let attempt = 0; ; attempt++) {
      const text = await scrape();
      if (seen(text) || attempt === 100) return text;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const startRun = async (definition: unknown) => {
    const workflow = await t.request('POST', '/api/v1/workflows', { body: { name: 'metrics', definition } });
    expect(workflow.status).toBe(201);
    const started = await t.request('POST', `/api/v1/workflows/${workflow.body.id}/runs`, { body: { runType: 'test', input: {} } });
    expect(started.status).toBe(202);
    return started.body.runId as string;
  };

  beforeAll(async () => {
    embeddings = await FakeEmbeddingsServer.start();
    t = await startTestApp({ EMBEDDINGS_URL: embeddings.url });
  });

  afterAll(async () => {
    await t?.close();
    await embeddings?.close();
  });

  it('answers without an API key, with process metrics, and stays out of the OpenAPI document', async () => {
    const text = await scrape();
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    const docs = await t.request('GET', '/docs/json');
    expect(Object.keys(docs.body.paths)).not.toContain('/metrics');
  });

  it('answers a burst of scrapes from one read of the queue', async () => {
    const depth = jest.spyOn(t.app.get(JobQueue), 'depth');
    try {
      await Promise.all(Array.from({ length: 5 }, () => scrape()));
      for (let i = 0; i < 5; i++) await scrape();
      // One read asks for each job name; a burst may straddle the end of one read's lifetime, not more.
      expect(depth.mock.calls.length).toBeLessThanOrEqual(2 * JOB_NAMES.length);
    } finally {
      depth.mockRestore();
    }
  });

  it('labels HTTP requests by route pattern, never by the raw URL', async () => {
    const collectionId = await createCollection(t, 'Metrics');
    for (let i = 0; i < 2; i++) expect((await t.request('GET', `/api/v1/collections/${collectionId}`)).status).toBe(200);
    expect((await t.request('GET', '/api/v1/collections/col_doesnotexist')).status).toBe(404);
    expect((await t.request('GET', '/no/such/route/abc123')).status).toBe(404);

    const text = await scrape();
    expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="/api/v1/collections/:id",status="200"}')).toBe(2);
    expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="/api/v1/collections/:id",status="404"}')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count{method="POST",route="/api/v1/collections",status="201"}')).toBe(1);
    expect(text).not.toContain(collectionId);
    expect(text).not.toContain('abc123');
  });

  it('times each ingestion stage, counts files by outcome, and times searches by mode', async () => {
    const collectionId = await createCollection(t, 'Notes');
    const notes = await addNotes(t, collectionId, 2);
    for (const id of notes.keys()) expect((await waitForFile(t, collectionId, id)).status).toBe('indexed');
    for (const mode of ['vector', 'hybrid', 'hybrid']) {
      const res = await t.request('POST', `/api/v1/collections/${collectionId}/search`, { body: { text: 'otter', mode } });
      expect(res.status).toBe(200);
    }

    const text = await scrape();
    expect(sample(text, 'ingestion_files_total{outcome="indexed"}')).toBe(2);
    expect(sample(text, 'ingestion_files_total{outcome="failed"}')).toBe(0);
    for (const stage of ['fetch', 'extract', 'chunk', 'embed', 'index']) {
      expect(sample(text, `ingestion_stage_duration_seconds_count{stage="${stage}"}`)).toBe(2);
    }
    expect(sample(text, 'search_duration_seconds_count{mode="vector"}')).toBe(1);
    expect(sample(text, 'search_duration_seconds_count{mode="hybrid"}')).toBe(2);
  });

  it('counts runs by terminal status, times them, and reads the queue depth', async () => {
    const trigger = { id: 'trigger', type: 'webhook-trigger', parameters: {} };
    const succeeded = await startRun({ nodes: [trigger], edges: [] });
    const failed = await startRun({
      nodes: [trigger, { id: 'stop', type: 'stop-and-error', parameters: { message: 'refused' } }],
      edges: [{ from: 'trigger', to: 'stop' }],
    });
    expect((await waitForRun(t.request, succeeded)).status).toBe('succeeded');
    expect((await waitForRun(t.request, failed)).status).toBe('failed');
    // Parked for an hour under a delayed job, then canceled while it waits.
    const waiting = await startRun({
      nodes: [trigger, { id: 'pause', type: 'wait', parameters: { amount: 1, unit: 'hours' } }],
      edges: [{ from: 'trigger', to: 'pause' }],
    });
    expect((await waitForRun(t.request, waiting, { statuses: ['waiting'] })).status).toBe('waiting');

    let text = await scrapeUntil((seen) => sample(seen, 'job_queue_jobs{job="workflow.run",state="delayed"}') === 1);
    expect(sample(text, 'job_queue_jobs{job="workflow.run",state="delayed"}')).toBe(1);
    expect(sample(text, 'job_queue_jobs{job="workflow.run",state="active"}')).toBe(0);
    expect(sample(text, 'job_queue_jobs{job="file.ingest",state="waiting"}')).toBe(0);

    expect((await t.request('POST', `/api/v1/runs/${waiting}/cancel`)).body.status).toBe('canceled');
    text = await scrape();
    expect(sample(text, 'workflow_runs_total{status="succeeded"}')).toBe(1);
    expect(sample(text, 'workflow_runs_total{status="failed"}')).toBe(1);
    expect(sample(text, 'workflow_runs_total{status="canceled"}')).toBe(1);
    expect(sample(text, 'workflow_run_duration_seconds_count{status="succeeded"}')).toBe(1);
    expect(sample(text, 'workflow_run_duration_seconds_count{status="failed"}')).toBe(1);
    // Canceled before it ran again: no execution to time.
    expect(sample(text, 'workflow_run_duration_seconds_count{status="canceled"}')).toBeUndefined();
  });
});

describe('/metrics with METRICS_ENABLED=false', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ METRICS_ENABLED: 'false' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('is not served', async () => {
    const res = await t.request('GET', '/metrics', { key: null });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND' });
  });
});
