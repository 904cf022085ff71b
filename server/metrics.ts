/** Prometheus metrics of one server instance (its own registry: no process-global state). */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface FloeMetrics {
  readonly registry: Registry;
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  readonly tokensIssued: Counter<'grant_type' | 'outcome'>;
}

export function createMetrics(): FloeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'floe_http_request_duration_seconds',
      help: 'HTTP request duration by route pattern and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    tokensIssued: new Counter({
      name: 'floe_oauth_token_requests_total',
      help: 'Token endpoint requests by grant type and outcome (success or the RFC 6749 error code)',
      labelNames: ['grant_type', 'outcome'],
      registers: [registry],
    }),
  };
}
