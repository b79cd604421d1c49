import { Metrics, QueueDepths } from './metrics.service';

const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('Metrics', () => {
  it('keeps each instance apart, so applications sharing a process do not mix their figures', async () => {
    const first = new Metrics();
    const second = new Metrics();
    first.runFinished('succeeded', 1.5);
    expect(sample(await first.render(), 'workflow_runs_total{status="succeeded"}')).toBe(1);
    expect(sample(await second.render(), 'workflow_runs_total{status="succeeded"}')).toBe(0);
  });

  it('reads the queue depth when its last read is old enough, and reports a queue that fails to answer instead of failing the scrape', async () => {
    const metrics = new Metrics({ queueDepthMaxAgeMs: 0 });
    let waiting = 3;
    let answers = true;
    metrics.readQueueDepthsFrom(async () => {
      if (!answers) throw new Error('connection refused');
      return { 'file.ingest': { waiting, delayed: 1, active: 0, failed: 2 } };
    });

    let text = await metrics.render();
    expect(sample(text, 'job_queue_jobs{job="file.ingest",state="waiting"}')).toBe(3);
    expect(sample(text, 'job_queue_jobs{job="file.ingest",state="failed"}')).toBe(2);
    waiting = 5;
    expect(sample(await metrics.render(), 'job_queue_jobs{job="file.ingest",state="waiting"}')).toBe(5);

    answers = false;
    text = await metrics.render();
    expect(sample(text, 'job_queue_jobs{job="file.ingest",state="waiting"}')).toBeUndefined();
    expect(sample(text, 'job_queue_read_errors_total')).toBe(1);
  });

  it('serves the scrapes of a few seconds from one read of the queue', async () => {
    const metrics = new Metrics();
    let reads = 0;
    let answer!: (depths: QueueDepths) => void;
    metrics.readQueueDepthsFrom(() => {
      reads++;
      return new Promise((resolve) => (answer = resolve));
    });

    // Scrapes arriving together share the read under way.
    const scrapes = [metrics.render(), metrics.render(), metrics.render()];
    await new Promise((resolve) => setImmediate(resolve));
    answer({ 'workflow.run': { waiting: 4, delayed: 0, active: 1, failed: 0 } });
    for (const text of await Promise.all(scrapes)) expect(sample(text, 'job_queue_jobs{job="workflow.run",state="waiting"}')).toBe(4);
    // And the scrapes right after it take its values.
    for (let i = 0; i < 5; i++) expect(sample(await metrics.render(), 'job_queue_jobs{job="workflow.run",state="waiting"}')).toBe(4);
    expect(reads).toBe(1);
  });

  it('stops waiting for a queue that hangs, and does not ask it again until it answers', async () => {
    const metrics = new Metrics({ queueDepthMaxAgeMs: 0, queueReadTimeoutMs: 20 });
    let reads = 0;
    let unhang!: (depths: QueueDepths) => void;
    metrics.readQueueDepthsFrom(() => {
      reads++;
      if (reads === 1) return new Promise((resolve) => (unhang = resolve));
      return Promise.resolve({ 'file.ingest': { waiting: 2, delayed: 0, active: 0, failed: 0 } });
    });

    let text = await metrics.render();
    expect(text).not.toContain('job_queue_jobs{');
    expect(sample(text, 'job_queue_read_errors_total')).toBe(1);
    text = await metrics.render();
    expect(sample(text, 'job_queue_read_errors_total')).toBe(2);
    expect(reads).toBe(1);

    // What the hung read finally says comes too late for the scrapes that gave up on it; the next refresh reads again.
    unhang({ 'file.ingest': { waiting: 99, delayed: 0, active: 0, failed: 0 } });
    await new Promise((resolve) => setImmediate(resolve));
    text = await metrics.render();
    expect(reads).toBe(2);
    expect(sample(text, 'job_queue_jobs{job="file.ingest",state="waiting"}')).toBe(2);
    expect(sample(text, 'job_queue_read_errors_total')).toBe(2);
  });

  it('puts requests no route matched under one label', async () => {
    const metrics = new Metrics();
    metrics.httpRequest('GET', undefined, 404, 0.001);
    metrics.httpRequest('GET', undefined, 404, 0.002);
    expect(sample(await metrics.render(), 'http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}')).toBe(2);
  });

  it('adds the process metrics only when asked', async () => {
    expect(await new Metrics().render()).not.toContain('process_cpu_user_seconds_total');
    expect(await new Metrics({ processMetrics: true }).render()).toContain('process_cpu_user_seconds_total');
  });
});
