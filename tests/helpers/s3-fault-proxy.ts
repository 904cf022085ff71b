/**
 * An HTTP proxy in front of an object store's endpoint (S3 or Azure Blob) that forwards requests
 * unchanged, Host header included, so signatures made for the proxy's address still verify at the
 * store, and injects faults:
 *
 * - `failNext`: chosen requests are answered by the proxy itself with a store error (503 SlowDown
 *   by default), after their body arrived;
 * - `interrupt`: chosen requests are broken in flight, at a point the test picks by an event rather
 *   than a clock: cut before anything reaches the store, cut (or held) after the first N bytes of
 *   the body reached it, or forwarded whole with the store's answer dropped;
 * - `startOutage`/`restore`: every connection is cut and every request refused until restored
 *   (an `interrupt` can start one at the moment it hits, so no request slips in between).
 */
import { createServer, request as httpRequest, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';

/** Which requests a fault applies to; an absent field matches any. */
export interface RequestMatch {
  readonly method?: string;
  readonly pathIncludes?: string;
}

/** What happens to a request an `interrupt` hits. */
export type MidRequestFault =
  /** The request (headers and body) reaches the proxy, which cuts the connection: nothing reaches the store. */
  | { readonly kind: 'reset-before-forward' }
  /**
   * The headers and the first `bytes` of the body (at most all but the last byte, so the request
   * is never complete) reach the store, then both connections are cut.
   */
  | { readonly kind: 'reset-after-bytes'; readonly bytes: number }
  /**
   * The headers and the first `bytes` of the body (at most all but the last byte) reach the store,
   * then the request waits for `release()`: the test may stop the store meanwhile. Released, the
   * rest of the body is sent, and whatever the store (or its absence) makes of it reaches the client.
   */
  | { readonly kind: 'hold-after-bytes'; readonly bytes: number }
  /** The request reaches the store whole and is answered; the proxy drops the answer and cuts the client's connection. */
  | { readonly kind: 'lose-answer' };

/** One armed `interrupt`. */
export interface Interruption {
  /** Resolves when the fault first hits a request (a held request is held; a lost answer was dropped). */
  readonly hit: Promise<void>;
  /** Requests the fault hit so far. */
  readonly hits: number;
  /** The store's status codes for the answers the proxy dropped (`lose-answer`), in order. */
  readonly lostAnswers: readonly number[];
  /** Lets held requests go on. */
  release(): void;
  /** Hits no further request. */
  cancel(): void;
}

export interface S3FaultProxy {
  /** `http://127.0.0.1:<port>`: give this to the client instead of the store's endpoint. */
  readonly endpoint: string;
  /** Requests seen so far (forwarded or answered with a fault). */
  readonly requests: number;
  /** Faults answered so far (`failNext` answers, and requests refused during an outage). */
  readonly faults: number;
  /** Answers the next `n` requests (optionally only those with `method`) with `status`/`code`. */
  failNext(n: number, fault?: { status?: number; code?: string; method?: string; pathIncludes?: string }): void;
  /**
   * Breaks the next `count` requests that `match` (default 1; `Infinity` for all until cancelled)
   * as `fault` says. With `thenOutage`, the first hit also starts an outage, in the same turn.
   */
  interrupt(match: RequestMatch, fault: MidRequestFault, options?: { count?: number; thenOutage?: boolean }): Interruption;
  /** Cuts every open connection and refuses every request (by cutting its connection) until `restore`. */
  startOutage(): void;
  restore(): void;
  close(): Promise<void>;
}

const matches = (m: RequestMatch, req: IncomingMessage): boolean =>
  (m.method === undefined || m.method === req.method) && (m.pathIncludes === undefined || (req.url ?? '').includes(m.pathIncludes));

interface Armed {
  readonly match: RequestMatch;
  readonly fault: MidRequestFault;
  readonly count: number;
  readonly thenOutage: boolean;
  hits: number;
  readonly lostAnswers: number[];
  readonly releases: Set<() => void>;
  released: boolean;
  resolveHit: () => void;
}

export async function startS3FaultProxy(target: string): Promise<S3FaultProxy> {
  const upstream = new URL(target);
  let pending = 0;
  let fault = { status: 503, code: 'SlowDown', method: undefined as string | undefined, pathIncludes: undefined as string | undefined };
  let requests = 0;
  let faults = 0;
  let outage = false;
  const armed = new Set<Armed>();

  const open = (req: IncomingMessage): ClientRequest => httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers });
  /** Relays the store's answer; a lost upstream connection cuts the client's, as a dead store would. */
  const relay = (up: ClientRequest, res: ServerResponse): void => {
    up.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => res.destroy());
  };
  const cut = (req: IncomingMessage, up?: ClientRequest): void => {
    up?.destroy();
    req.socket.destroy();
  };

  const hitBy = (a: Armed): void => {
    a.hits++;
    if (a.hits >= a.count) armed.delete(a);
    if (a.thenOutage) startOutage();
    a.resolveHit();
  };

  /** Sends the headers and the first bytes of the body, then stops: the request is mid-flight. */
  const interruptBody = (a: Armed, bytes: number, hold: boolean, req: IncomingMessage, res: ServerResponse): void => {
    const up = open(req);
    relay(up, res);
    up.flushHeaders();
    const total = Number(req.headers['content-length']);
    let limit = Number.isFinite(total) ? Math.min(bytes, Math.max(0, total - 1)) : bytes;
    let sent = 0;
    let stopped = false;
    let ended = false;
    const held: Buffer[] = [];
    /** Sends `head`, the last bytes before the cut, and acts once they are handed to the store's connection. */
    const stop = (head: Buffer): void => {
      stopped = true;
      req.pause();
      up.write(head, () => {
        if (!hold) {
          hitBy(a);
          cut(req, up);
          return;
        }
        const release = (): void => {
          a.releases.delete(release);
          stopped = false;
          limit = Infinity;
          for (const b of held.splice(0)) up.write(b);
          if (ended) up.end();
          else req.resume();
        };
        a.releases.add(release);
        hitBy(a);
        if (a.released) release();
      });
    };
    req.on('data', (chunk: Buffer) => {
      if (stopped) return void held.push(chunk);
      const room = limit - sent;
      if (chunk.length < room) {
        up.write(chunk);
        sent += chunk.length;
        return;
      }
      sent = limit;
      held.push(chunk.subarray(room));
      stop(chunk.subarray(0, room));
    });
    req.on('end', () => {
      ended = true;
      if (!stopped) up.end();
    });
    if (limit <= 0) stop(Buffer.alloc(0));
  };

  const applyInterrupt = (a: Armed, req: IncomingMessage, res: ServerResponse): void => {
    switch (a.fault.kind) {
      case 'reset-before-forward':
        req.resume();
        req.on('end', () => {
          hitBy(a);
          cut(req);
        });
        return;
      case 'reset-after-bytes':
        return interruptBody(a, a.fault.bytes, false, req, res);
      case 'hold-after-bytes':
        return interruptBody(a, a.fault.bytes, true, req, res);
      case 'lose-answer': {
        const up = open(req);
        up.on('response', (answer) => {
          answer.resume();
          answer.on('end', () => {
            a.lostAnswers.push(answer.statusCode ?? 0);
            hitBy(a);
            cut(req);
          });
        });
        up.on('error', () => res.destroy());
        req.pipe(up);
        return;
      }
    }
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests++;
    if (outage) {
      faults++;
      cut(req);
      return;
    }
    for (const a of armed) {
      if (matches(a.match, req)) return applyInterrupt(a, req, res);
    }
    if (pending > 0 && matches(fault, req)) {
      pending--;
      faults++;
      req.resume();
      req.on('end', () => {
        res.writeHead(fault.status, { 'content-type': 'application/xml' });
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${fault.code}</Code><Message>injected by the test proxy</Message></Error>`);
      });
      return;
    }
    const forward = open(req);
    relay(forward, res);
    req.pipe(forward);
  });
  const startOutage = (): void => {
    outage = true;
    server.closeAllConnections();
  };
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
      fault = { status: f.status ?? 503, code: f.code ?? 'SlowDown', method: f.method, pathIncludes: f.pathIncludes };
    },
    interrupt(match, midFault, options = {}) {
      let resolveHit = (): void => undefined;
      const hit = new Promise<void>((resolve) => (resolveHit = resolve));
      const a: Armed = { match, fault: midFault, count: options.count ?? 1, thenOutage: options.thenOutage === true, hits: 0, lostAnswers: [], releases: new Set(), released: false, resolveHit };
      armed.add(a);
      return {
        hit,
        get hits() {
          return a.hits;
        },
        get lostAnswers() {
          return a.lostAnswers;
        },
        release() {
          a.released = true;
          for (const r of [...a.releases]) r();
        },
        cancel() {
          armed.delete(a);
        },
      };
    },
    startOutage,
    restore() {
      outage = false;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
