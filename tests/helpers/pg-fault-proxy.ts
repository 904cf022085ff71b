/**
 * A TCP proxy in front of PostgreSQL that reads the wire protocol (v3) both ways, message by
 * message, so that a test can break a connection at one exact message rather than at a moment:
 * the COMMIT of the transaction that ran a chosen statement is either never forwarded (the server
 * sees the connection close inside the transaction and rolls it back) or forwarded and answered,
 * with the answer dropped and the connection cut (the server committed; the client cannot know).
 * That is a metadata store lost mid-commit, which an in-process PGlite cannot show.
 *
 * Plain connections only: a client that asks for TLS gets the server's answer relayed, and a
 * connection that then speaks TLS is not parsed (no test here asks for it).
 */
import { startTcpProxy } from './tcp-proxy.js';

/** What happens to the COMMIT an interruption hits. */
export type CommitFault =
  /** Never reaches the server: both connections are cut, so the server rolls the transaction back. */
  | 'drop-before-forward'
  /** Reaches the server and is answered; the proxy drops the answer and cuts both connections. */
  | 'lose-answer';

export interface CommitInterruption {
  /**
   * Resolves once the fault hit: the connection is cut. For `lose-answer`, with the tag of the
   * server's dropped CommandComplete (`COMMIT`, or `ROLLBACK` for a transaction that had failed).
   */
  readonly hit: Promise<{ readonly serverTag?: string }>;
  /** Hits nothing more. */
  cancel(): void;
}

export interface PgFaultProxy {
  readonly port: number;
  /** `connectionString` with its host and port replaced by the proxy's. */
  via(connectionString: string): string;
  /** Breaks the next COMMIT of a transaction that ran a statement whose text matches `after`. */
  interruptCommit(fault: CommitFault, after: RegExp): CommitInterruption;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** Splits a byte stream into protocol messages: untyped startup packets first, then typed ones. */
class Framer {
  #buf: Buffer = Buffer.alloc(0);
  /** Untyped packets still expected (the client's startup; the server's one-byte TLS answers). */
  untyped: number;
  singleBytes = 0;

  constructor(untyped: number) {
    this.untyped = untyped;
  }

  push(chunk: Buffer): { type: string | undefined; raw: Buffer; body: Buffer }[] {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const out: { type: string | undefined; raw: Buffer; body: Buffer }[] = [];
    for (;;) {
      if (this.singleBytes > 0) {
        if (this.#buf.length < 1) break;
        this.singleBytes--;
        out.push({ type: undefined, raw: this.#buf.subarray(0, 1), body: this.#buf.subarray(0, 1) });
        this.#buf = this.#buf.subarray(1);
        continue;
      }
      if (this.untyped > 0) {
        if (this.#buf.length < 4) break;
        const len = this.#buf.readInt32BE(0);
        if (this.#buf.length < len) break;
        this.untyped--;
        out.push({ type: undefined, raw: this.#buf.subarray(0, len), body: this.#buf.subarray(4, len) });
        this.#buf = this.#buf.subarray(len);
        continue;
      }
      if (this.#buf.length < 5) break;
      const len = this.#buf.readInt32BE(1);
      if (this.#buf.length < 1 + len) break;
      out.push({ type: String.fromCharCode(this.#buf[0]!), raw: this.#buf.subarray(0, 1 + len), body: this.#buf.subarray(5, 1 + len) });
      this.#buf = this.#buf.subarray(1 + len);
    }
    return out;
  }
}

const cstrings = (body: Buffer, n: number): string[] => {
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    const end = body.indexOf(0, at);
    if (end === -1) break;
    out.push(body.toString('utf8', at, end));
    at = end + 1;
  }
  return out;
};

interface Armed {
  readonly fault: CommitFault;
  readonly after: RegExp;
  resolve(r: { serverTag?: string }): void;
}

export async function startPgFaultProxy(targetHost: string, targetPort: number): Promise<PgFaultProxy> {
  const armed = new Set<Armed>();
  const proxy = await startTcpProxy(targetHost, targetPort, (client, upstream, cut) => {
    const fromClient = new Framer(1);
    const fromServer = new Framer(0);
    /** Statement texts by prepared-statement name, for Binds that name no text. */
    const prepared = new Map<string, string>();
    /** The armed fault whose statement this connection's open transaction ran. */
    let matched: Armed | undefined;
    /** The fault whose COMMIT was forwarded: the server's answer is dropped. */
    let losing: Armed | undefined;
    let serverTag: string | undefined;
    const ran = (text: string): void => {
      if (matched !== undefined) return;
      for (const a of armed) if (a.after.test(text)) return void (matched = a);
    };

    client.on('data', (chunk: Buffer) => {
      for (const m of fromClient.push(chunk)) {
        if (m.type === undefined) {
          const code = m.body.length >= 4 ? m.body.readInt32BE(0) : 0;
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
            // The server answers one byte, then the client sends its startup packet.
            fromServer.singleBytes++;
            fromClient.untyped++;
          }
        } else if (m.type === 'Q') {
          const [text = ''] = cstrings(m.body, 1);
          if (/^\s*(COMMIT|END)\s*;?\s*$/i.test(text) && matched !== undefined && armed.has(matched)) {
            const a = matched;
            armed.delete(a);
            if (a.fault === 'drop-before-forward') {
              cut();
              a.resolve({});
              return;
            }
            losing = a;
          } else {
            ran(text);
          }
        } else if (m.type === 'P') {
          const [name = '', text = ''] = cstrings(m.body, 2);
          if (name !== '') prepared.set(name, text);
          ran(text);
        } else if (m.type === 'B') {
          const [, name = ''] = cstrings(m.body, 2);
          const text = prepared.get(name);
          if (name !== '' && text !== undefined) ran(text);
        }
        upstream.write(m.raw);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      for (const m of fromServer.push(chunk)) {
        if (losing !== undefined) {
          if (m.type === 'C') serverTag = cstrings(m.body, 1)[0];
          if (m.type === 'Z') {
            const a = losing;
            cut();
            a.resolve({ ...(serverTag !== undefined ? { serverTag } : {}) });
            return;
          }
          continue;
        }
        // ReadyForQuery with status I: no transaction is open any more.
        if (m.type === 'Z' && m.body[0] === 'I'.charCodeAt(0)) matched = undefined;
        client.write(m.raw);
      }
    });
  });
  return {
    port: proxy.port,
    via(connectionString) {
      const url = new URL(connectionString);
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      return url.toString();
    },
    interruptCommit(fault, after) {
      let resolve = (_: { serverTag?: string }): void => undefined;
      const hit = new Promise<{ serverTag?: string }>((r) => (resolve = r));
      const a: Armed = { fault, after, resolve };
      armed.add(a);
      return { hit, cancel: () => void armed.delete(a) };
    },
    close: () => proxy.close(),
  };
}
