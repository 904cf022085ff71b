/** Prometheus metrics of one server instance (its own registry: no process-global state). */
import type { FileCacheStats } from '../engine/exec/file-cache.js';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { CountingHistogram, type HistogramSeries } from '../engine/metrics.js';

export interface FloeMetrics {
  readonly registry: Registry;
  /** `floe_http_request_duration_seconds`, by method, route pattern and status code. */
  readonly httpDuration: CountingHistogram<'method' | 'route' | 'status_code'>;
  /** Observes one request in `httpDuration`: on every request's path, so its series are kept. */
  readonly observeHttp: (method: string, route: string, statusCode: number, seconds: number) => void;
  readonly tokensIssued: Counter<'grant_type' | 'outcome'>;
}

export function createMetrics(): FloeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const httpDuration = new CountingHistogram({
    name: 'floe_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern and status code',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  // Series by one string: the label sets are bounded (route patterns, never URLs × methods × codes).
  const series = new Map<string, HistogramSeries>();
  return {
    registry,
    httpDuration,
    observeHttp: (method, route, statusCode, seconds) => {
      const key = `${method} ${statusCode} ${route}`;
      let s = series.get(key);
      if (s === undefined) series.set(key, s = httpDuration.series({ method, route, status_code: String(statusCode) }));
      s.observe(seconds);
    },
    tokensIssued: new Counter({
      name: 'floe_oauth_token_requests_total',
      help: 'Token endpoint requests by grant type and outcome (success or the RFC 6749 error code)',
      labelNames: ['grant_type', 'outcome'],
      registers: [registry],
    }),
  };
}

/** What the history gauges read at scrape time. */
export interface HistoryBacklog {
  readonly pendingCount: number;
  readonly droppedCount: number;
}

/**
 * History's write-behind as metrics: records waiting for the store (alert well before
 * `query.history_max_pending`, where statements are refused) and records the store refused.
 */
export function registerHistoryMetrics(registry: Registry, history: HistoryBacklog): void {
  new Gauge({
    name: 'floe_query_history_pending_records', help: 'Query history records not yet written to the store', registers: [registry],
    collect() {
      this.set(history.pendingCount);
    },
  });
  new Counter({
    name: 'floe_query_history_dropped_records_total', help: 'Query history records the store refused as data (e.g. their tenant was deleted) and that were dropped', registers: [registry],
    collect() {
      this.reset();
      this.inc(history.droppedCount);
    },
  });
}

/** The read-through cache of object-store files (engine/exec/file-cache.ts) as metrics. */
export function registerFileCacheMetrics(registry: Registry, stats: () => FileCacheStats): void {
  const counter = (name: string, help: string, read: (s: FileCacheStats) => number): void => {
    new Counter({
      name, help, registers: [registry],
      collect() {
        this.reset();
        this.inc(read(stats()));
      },
    });
  };
  counter('floe_file_cache_hits_total', 'Object-store files a statement found in the local cache', (s) => s.hits);
  counter('floe_file_cache_misses_total', 'Object-store files a statement had to fetch', (s) => s.misses);
  counter('floe_file_cache_fetched_bytes_total', 'Bytes fetched from object storage into the cache or a query scratch folder', (s) => s.bytesFetched);
  counter('floe_file_cache_evictions_total', 'Cached files evicted to make room', (s) => s.evictions);
  counter('floe_file_cache_stale_refetches_total', 'Cached files found rewritten in storage (another ETag) and fetched again', (s) => s.staleRefetches);
  counter('floe_file_cache_size_mismatch_total', 'Fetched data files whose size was not the manifest\'s (served as stored)', (s) => s.sizeMismatches);
  counter('floe_file_cache_bypasses_total', 'Files fetched outside the cache because pinned files left no room', (s) => s.bypasses);
  new Gauge({
    name: 'floe_file_cache_resident_bytes', help: 'Bytes the cache holds on local disk (fetches in flight included)', registers: [registry],
    collect() {
      this.set(stats().residentBytes);
    },
  });
  new Gauge({
    name: 'floe_file_cache_peak_resident_bytes', help: 'The highest resident bytes since start (never above the budget)', registers: [registry],
    collect() {
      this.set(stats().peakResidentBytes);
    },
  });
  new Gauge({
    name: 'floe_file_cache_max_bytes', help: 'The cache budget (storage.cache.max_bytes)', registers: [registry],
    collect() {
      this.set(stats().maxBytes);
    },
  });
}
