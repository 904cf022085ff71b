/**
 * Real HTTP for tests that must go through a socket (body limits, headers, what a client library
 * sees): the test server listens on loopback and requests go through `fetch`.
 */
import type { AddressInfo } from 'node:net';
import type { TestServer } from './server.js';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

export interface LoopbackClient {
  readonly url: string;
  request(method: string, path: string, options?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<HttpAnswer>;
  /** POST /api/query with `fields` as the body (at least `sql`). */
  query(token: string | undefined, fields: Record<string, unknown>): Promise<HttpAnswer>;
}

/** Makes the test server listen on 127.0.0.1 (a free port) and returns a client for it. */
export async function listenOnLoopback(server: TestServer): Promise<LoopbackClient> {
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
  const request: LoopbackClient['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const r = await fetch(`${url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await r.text();
    let json: unknown;
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: r.status, headers: r.headers, text, json };
  };
  return { url, request, query: (token, fields) => request('POST', '/api/query', { ...(token !== undefined ? { token } : {}), body: fields }) };
}
