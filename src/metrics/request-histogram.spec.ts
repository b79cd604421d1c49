import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { RequestHistogram } from './request-histogram';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const NAME = 'http_request_duration_seconds';
const HELP = 'HTTP requests by method, route pattern and status.';

/** The same requests into prom-client's Histogram and into RequestHistogram, each in its own registry. */
function both(requests: [string, string, number, number][]) {
  const theirs = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [theirs],
  });
  const request = new RequestHistogram({ name: NAME, help: HELP, buckets: BUCKETS, registers: [ours] });
  for (const [method, route, status, seconds] of requests) {
    histogram.observe({ method, route, status: String(status) }, seconds);
    request.record(method, route, status, seconds);
  }
  return { theirs, ours, request };
}

const REQUESTS: [string, string, number, number][] = [
  ['POST', '/api/v1/workflows/:id/runs', 202, 0.0004],
  ['GET', '/api/v1/runs/:id', 200, 0.003],
  ['POST', '/api/v1/workflows/:id/runs', 202, 0.0025],
  ['POST', '/api/v1/workflows/:id/runs', 429, 0.02],
  ['GET', 'unmatched', 404, 12],
  ['GET', '/api/v1/runs/:id', 200, 10],
  ['POST', '/api/v1/workflows/:id/runs', 202, 0.7],
  ['GET', '/api/v1/collections/:id/search', 200, 0],
];

describe('RequestHistogram', () => {
  it('renders /metrics exactly as prom-client renders the same requests', async () => {
    const { theirs, ours } = both(REQUESTS);
    const text = await ours.metrics();
    expect(text).toContain('http_request_duration_seconds_count{method="POST",route="/api/v1/workflows/:id/runs",status="202"} 3');
    expect(text).toBe(await theirs.metrics());
  });

  it('gives the JSON another process sends, and its sum with others, as prom-client does', async () => {
    const { theirs, ours } = both(REQUESTS);
    const [theirJson, ourJson] = [await theirs.getMetricsAsJSON(), await ours.getMetricsAsJSON()];
    expect(ourJson).toEqual(theirJson);
    const summed = (own: typeof ourJson) => AggregatorRegistry.aggregate([own, theirJson]).metrics();
    expect(await summed(ourJson)).toBe(await summed(theirJson));
  });

  it('starts over on reset and refuses a value that is not a number', async () => {
    const { theirs, ours, request } = both(REQUESTS);
    request.reset();
    expect(await ours.metrics()).toBe(`# HELP ${NAME} ${HELP}\n# TYPE ${NAME} histogram\n`);
    expect(await ours.metrics()).not.toBe(await theirs.metrics());
    expect(() => request.record('GET', '/x', 200, NaN)).toThrow(TypeError);
  });

  it("refuses prom-client's own ways in, whose observations it would never export", () => {
    // As code that holds it as the Histogram it extends would call it.
    const request: Histogram<'method' | 'route' | 'status'> = both([]).request;
    const labels = { method: 'GET', route: '/x', status: '200' };
    expect(() => request.observe(labels, 0.1)).toThrow(/record\(\)/);
    expect(() => request.startTimer(labels)).toThrow(/record\(\)/);
    expect(() => request.labels(labels)).toThrow(/record\(\)/);
    expect(() => request.zero(labels)).toThrow(/record\(\)/);
    expect(() => request.remove(labels)).toThrow(/record\(\)/);
  });
});
