/** Prometheus metrics of one server instance (its own registry: no process-global state). */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface FloeMetrics {
  readonly registry: Registry;
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  /** Observes one request's duration in `httpDuration` (on every request's path: see below). */
  readonly observeHttp: (method: string, route: string, statusCode: number, seconds: number) => void;
  readonly tokensIssued: Counter<'grant_type' | 'outcome'>;
}

export function createMetrics(): FloeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const httpDuration = new Histogram<'method' | 'route' | 'status_code'>({
    name: 'floe_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern and status code',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return {
    registry,
    httpDuration,
    observeHttp: httpObserver(httpDuration),
    tokensIssued: new Counter({
      name: 'floe_oauth_token_requests_total',
      help: 'Token endpoint requests by grant type and outcome (success or the RFC 6749 error code)',
      labelNames: ['grant_type', 'outcome'],
      registers: [registry],
    }),
  };
}

/**
 * `observe` with labels looks the child up by hashing the label object on every call; with a
 * request per `SELECT 1` that was a few per cent of the server's CPU. Children are kept by their
 * label values here (a bounded set: methods × route patterns × status codes).
 */
function httpObserver(histogram: Histogram<'method' | 'route' | 'status_code'>): FloeMetrics['observeHttp'] {
  const children = new Map<string, { observe(value: number): void }>();
  return (method, route, statusCode, seconds) => {
    const key = `${method} ${statusCode} ${route}`;
    let child = children.get(key);
    if (child === undefined) children.set(key, child = histogram.labels(method, route, String(statusCode)));
    child.observe(seconds);
  };
}
