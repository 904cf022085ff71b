/**
 * An HTTP proxy in front of an S3 endpoint that answers chosen requests itself with an S3 error
 * (503 SlowDown by default) and forwards the rest unchanged, Host header included, so SigV4
 * signatures made for the proxy's address still verify at the store.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

export interface S3FaultProxy {
  /** `http://127.0.0.1:<port>`: give this to the client instead of the store's endpoint. */
  readonly endpoint: string;
  /** Requests seen so far (forwarded or answered with a fault). */
  readonly requests: number;
  /** Faults answered so far. */
  readonly faults: number;
  /** Answers the next `n` requests (optionally only those with `method`) with `status`/`code`. */
  failNext(n: number, fault?: { status?: number; code?: string; method?: string }): void;
  close(): Promise<void>;
}

export async function startS3FaultProxy(target: string): Promise<S3FaultProxy> {
  const upstream = new URL(target);
  let pending = 0;
  let fault = { status: 503, code: 'SlowDown', method: undefined as string | undefined };
  let requests = 0;
  let faults = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests++;
    if (pending > 0 && (fault.method === undefined || fault.method === req.method)) {
      pending--;
      faults++;
      req.resume();
      req.on('end', () => {
        res.writeHead(fault.status, { 'content-type': 'application/xml' });
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${fault.code}</Code><Message>injected by the test proxy</Message></Error>`);
      });
      return;
    }
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get faults() {
      return faults;
    },
    failNext(n, f = {}) {
      pending = n;
      fault = { status: f.status ?? 503, code: f.code ?? 'SlowDown', method: f.method };
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
