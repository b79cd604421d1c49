import { Metrics } from './metrics.service';

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

  it('reads the queue depth at each scrape, and reports a queue that fails to answer instead of failing the scrape', async () => {
    const metrics = new Metrics();
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
