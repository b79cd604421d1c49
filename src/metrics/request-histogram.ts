import { Histogram, MetricObjectWithValues, MetricValueWithName } from 'prom-client';

type Labels = 'method' | 'route' | 'status';

/** One series: its labels, sum, count and the observations that fell in each bucket (not cumulative). */
interface Series {
  readonly labels: Record<Labels, string>;
  sum: number;
  count: number;
  readonly buckets: number[];
}

/**
 * http_request_duration_seconds, recorded once per request. prom-client's Histogram checks the
 * label names and builds a string key from the labels on every observation, labelled child or
 * not (a few percent of a webhook call's CPU); here each (route, method, status) finds its series
 * through maps of the values themselves, and the series are exported exactly as the Histogram
 * exports them (same order, labels, values), for /metrics and for the JSON other processes send.
 * Routes are the finite route patterns (unmatched paths share one), methods and statuses few.
 */
export class RequestHistogram extends Histogram<Labels> {
  private readonly bounds: readonly number[];
  private readonly metricName: string;
  private readonly metricHelp: string;
  /** In the order the series were first seen, as prom-client keeps them. */
  private series: Series[] = [];
  private byRoute = new Map<string, Map<string, Map<number, Series>>>();

  constructor(config: {
    name: string;
    help: string;
    buckets: number[];
    registers: ConstructorParameters<typeof Histogram>[0]['registers'];
  }) {
    super({ ...config, labelNames: ['method', 'route', 'status'] });
    this.observe = () => {
      throw notHere('observe');
    };
    this.bounds = [...config.buckets].sort((a, b) => a - b);
    this.metricName = config.name;
    this.metricHelp = config.help;
  }

  record(method: string, route: string, status: number, seconds: number): void {
    if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) {
      series = { labels: { method, route, status: String(status) }, sum: 0, count: 0, buckets: this.bounds.map(() => 0) };
      byStatus.set(status, series);
      this.series.push(series);
    }
    series.sum += seconds;
    series.count += 1;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]) {
        series.buckets[i] += 1;
        break;
      }
    }
  }

  /**
   * prom-client's own ways in would write to the store this class never exports: an observation
   * made through them would vanish from /metrics without a word. Only `record` records here
   * (`observe` is refused in the constructor: prom-client sets it on the instance there).
   */
  override startTimer(): never {
    throw notHere('startTimer');
  }

  override labels(): never {
    throw notHere('labels');
  }

  override zero(): never {
    throw notHere('zero');
  }

  override remove(): never {
    throw notHere('remove');
  }

  override reset(): void {
    this.series = [];
    this.byRoute = new Map();
  }

  /** As Histogram's: each series' labels shared by its bucket, sum and count values. */
  async getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<Labels>>> {
    const name = this.metricName;
    const values: (MetricValueWithName<Labels> & { sharedLabels: Record<Labels, string>; exemplar?: null })[] = [];
    for (const series of this.series) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.buckets[i];
        values.push(value({ le: this.bounds[i] }, cumulative, `${name}_bucket`, series.labels, null));
      }
      values.push(
        value({ le: '+Inf' }, series.count, `${name}_bucket`, series.labels, null),
        value({}, series.sum, `${name}_sum`, series.labels, undefined),
        value({}, series.count, `${name}_count`, series.labels, undefined),
      );
    }
    // Histogram's declared type has a `collect` its values never carry.
    return { name, help: this.metricHelp, type: 'histogram', values, aggregator: 'sum' } as unknown as MetricObjectWithValues<
      MetricValueWithName<Labels>
    >;
  }

  /** As Histogram's: every value with its series' labels merged into its own. */
  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<Labels>>> {
    const data = await this.getForPromString();
    data.values = data.values.map((entry) => {
      const { sharedLabels, labels, ...rest } = entry as typeof entry & { sharedLabels: Record<string, string> };
      return { ...rest, labels: { ...labels, ...sharedLabels } };
    });
    return data;
  }
}

function value(labels: object, count: number, metricName: string, sharedLabels: Record<Labels, string>, exemplar: null | undefined) {
  return { labels: labels as Partial<Record<Labels, string | number>>, sharedLabels, value: count, metricName, exemplar };
}

const notHere = (method: string) => new TypeError(`RequestHistogram records through record(), not ${method}()`);
