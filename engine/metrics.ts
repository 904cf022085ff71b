/**
 * A Prometheus histogram for observations on every request's path, exposed by prom-client's
 * registry in the same text as prom-client's own `Histogram`.
 *
 * prom-client's `observe` validates the label object and hashes it on each call, and so do the
 * children `labels()` returns: with one HTTP observation and one queue-wait observation per
 * `SELECT 1`, that was 3-4 % of the server's CPU under 32 clients (docs/performance.md). Here a
 * series is resolved once from its label values and observing is a scan of the bounds and three
 * additions. Everything else (exposition, the scrape) stays prom-client's.
 */
import type { Metric, Registry } from 'prom-client';

export interface HistogramSeries {
  observe(value: number): void;
}

export interface CountingHistogramOptions<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Upper bounds, ascending; `+Inf` is added. */
  readonly buckets: readonly number[];
  readonly registers: readonly Registry[];
}

interface Series extends HistogramSeries {
  readonly labels: Readonly<Record<string, string>>;
  /** Observations per bucket (not cumulative); the last slot is above the largest bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

export class CountingHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly #labelNames: readonly L[];
  readonly #bounds: readonly number[];
  readonly #series = new Map<string, Series>();

  constructor(options: CountingHistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.#labelNames = options.labelNames;
    this.#bounds = options.buckets;
    for (let i = 1; i < this.#bounds.length; i++) {
      if (!(this.#bounds[i]! > this.#bounds[i - 1]!)) throw new Error(`${this.name}: buckets must ascend`);
    }
    // prom-client's registry reads any object of its metric shape (`name`, `get()`, `reset()`).
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values: keep it where the same labels repeat (a label set is never dropped). */
  series(labels: Readonly<Record<L, string>>): HistogramSeries {
    const key = this.#labelNames.map((n) => labels[n]).join('\u0000');
    let s = this.#series.get(key);
    if (s === undefined) {
      const bounds = this.#bounds;
      const series: Series = {
        labels: Object.fromEntries(this.#labelNames.map((n) => [n, labels[n]])),
        counts: new Array<number>(bounds.length + 1).fill(0),
        sum: 0,
        count: 0,
        observe(value: number): void {
          if (!Number.isFinite(value)) return;
          let bucket = 0;
          while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
          series.counts[bucket]! += 1;
          series.sum += value;
          series.count += 1;
        },
      };
      this.#series.set(key, s = series);
    }
    return s;
  }

  /** The metric as prom-client's registry reads it: cumulative `_bucket`s with `le`, `_sum`, `_count`. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: { labels: Record<string, string | number>; value: number; metricName: string }[] }> {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.#series.values()) {
      if (s.count === 0) continue; // reset since, and not observed again: as prom-client, nothing
      let cumulative = 0;
      for (let i = 0; i <= this.#bounds.length; i++) {
        cumulative += s.counts[i]!;
        values.push({ labels: { le: i < this.#bounds.length ? this.#bounds[i]! : '+Inf', ...s.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every series in place (callers keep their series). */
  reset(): void {
    for (const s of this.#series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
