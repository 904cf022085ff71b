/**
 * Helpers for the catalog scenario tests: a Floe server whose warehouse is a temp folder, and a
 * client that sends requests through `app.inject` (or real HTTP) and checks every exchange against
 * the Iceberg OpenAPI document (tests/helpers/openapi.ts). A violation throws, failing the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Test } from 'tap';
import { parseJson, stringifyJson, type JsonValue } from '../../catalog/iceberg/json.js';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { OpenApiValidator } from '../helpers/openapi.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** One validator for the whole process (compiling the document is the slow part). */
let shared: OpenApiValidator | undefined;
export function openApi(): OpenApiValidator {
  shared ??= OpenApiValidator.load();
  return shared;
}

export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
  readonly text: string;
  /** The body parsed int64-safely (undefined when empty). */
  readonly body: any;
}

export interface SendOptions {
  readonly headers?: Record<string, string>;
  /** Raw text to send instead of `body` (malformed JSON tests). */
  readonly raw?: string;
  /** The request is deliberately off-spec: do not validate it (the response still is). */
  readonly offSpec?: boolean;
}

/** Sends requests to one server as one token holder, validating each exchange. */
export class CatalogClient {
  constructor(
    readonly send: (method: string, url: string, payload: string | undefined, headers: Record<string, string>) => Promise<{ status: number; headers: Record<string, any>; text: string }>,
    private readonly token: string,
  ) {}

  async call(method: string, url: string, body?: unknown, options: SendOptions = {}): Promise<Reply> {
    const v = openApi();
    if (body !== undefined && options.offSpec !== true && options.raw === undefined) {
      const problems = v.validateRequest(method, url, JSON.parse(stringifyJson(body)));
      if (problems.length > 0) throw new Error(`test sent an off-spec request: ${problems.join('; ')}`);
    }
    const payload = options.raw ?? (body === undefined ? undefined : stringifyJson(body));
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers };
    const r = await this.send(method, url, payload, headers);
    const problems = v.validateResponse(method, url, r.status, r.text);
    if (problems.length > 0) throw new Error(`response violates the OpenAPI spec: ${problems.join('; ')}`);
    return { status: r.status, headers: r.headers, text: r.text, body: r.text === '' ? undefined : parseJson(r.text) };
  }

  get(url: string, options?: SendOptions): Promise<Reply> { return this.call('GET', url, undefined, options); }
  head(url: string, options?: SendOptions): Promise<Reply> { return this.call('HEAD', url, undefined, options); }
  post(url: string, body?: unknown, options?: SendOptions): Promise<Reply> { return this.call('POST', url, body, options); }
  delete(url: string, options?: SendOptions): Promise<Reply> { return this.call('DELETE', url, undefined, options); }
}

export interface CatalogServer {
  readonly server: TestServer;
  readonly client: CatalogClient;
  /** The temp folder holding the `default` catalog's warehouse. */
  readonly dataDir: string;
  readonly warehouse: string;
  clientFor(token: string): CatalogClient;
  /** The `default` catalog's storage (a folder, or a bucket in the warehouse matrix). */
  readonly files: {
    exists(location: string): Promise<boolean>;
    /** File names (not paths) under `location`'s folder, e.g. its `metadata/`. */
    names(folder: string): Promise<readonly string[]>;
  };
}

/** A test server over `store` whose data directory (and so warehouse) is a fresh temp folder. */
export async function startCatalogServer(t: Test, store: MetaStore, scope?: string): Promise<CatalogServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'floe-catalog-'));
  const server = await startTestServer(store, { keepStore: true, config: (c) => ({ ...c, data_dir: dataDir }) });
  t.teardown(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const token = await server.token(scope);
  const clientFor = (tok: string): CatalogClient => new CatalogClient(async (method, url, payload, headers) => {
    const r = await server.app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload } : {}) });
    return { status: r.statusCode, headers: r.headers, text: r.body };
  }, tok);
  const io = () => server.state.catalog.fileIOFor({ tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] }, 'default');
  const files = {
    exists: async (location: string) => (await io()).exists(location),
    names: async (folder: string) => {
      const prefix = `${folder.replace(/\/+$/, '')}/`;
      return (await (await io()).list(prefix)).map((f) => f.location.slice(f.location.lastIndexOf('/') + 1));
    },
  };
  return { server, client: clientFor(token), dataDir, warehouse: path.join(dataDir, 'warehouse'), clientFor, files };
}

export const CAT = '/v1/default';

/** The `%1F`-joined path form of a namespace. */
export function nsPath(...levels: string[]): string {
  return levels.map(encodeURIComponent).join('%1F');
}

/** A small schema in REST form. */
export function sampleSchema(): JsonValue {
  return {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', type: 'long', required: true },
      { id: 2, name: 'data', type: 'string', required: false },
      { id: 3, name: 'ts', type: 'timestamptz', required: false },
    ],
  };
}

export async function createNamespace(c: CatalogClient, ...levels: string[]): Promise<void> {
  const r = await c.post(`${CAT}/namespaces`, { namespace: levels, properties: {} });
  if (r.status !== 200) throw new Error(`create namespace ${levels.join('.')}: ${r.status} ${r.text}`);
}

export async function createTable(c: CatalogClient, ns: string[], name: string, extra: Record<string, unknown> = {}): Promise<Reply> {
  const r = await c.post(`${CAT}/namespaces/${nsPath(...ns)}/tables`, { name, schema: sampleSchema(), ...extra });
  if (r.status !== 200) throw new Error(`create table ${name}: ${r.status} ${r.text}`);
  return r;
}

/** An `add-snapshot` + `set-snapshot-ref main` commit body appending one (fake) manifest list. */
export function appendCommit(table: any, snapshotId: bigint, options: { readonly assertRef?: boolean } = {}): unknown {
  const m = table.metadata;
  const current = m['current-snapshot-id'] === -1 || m['current-snapshot-id'] === undefined ? null : BigInt(m['current-snapshot-id']);
  const seq = Number(m['last-sequence-number'] ?? 0) + 1;
  return {
    requirements: options.assertRef === false ? [] : [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': current }],
    updates: [
      {
        action: 'add-snapshot',
        snapshot: {
          'snapshot-id': snapshotId,
          ...(current !== null ? { 'parent-snapshot-id': current } : {}),
          'sequence-number': seq,
          'timestamp-ms': Date.now(),
          'manifest-list': `${m.location}/metadata/snap-${snapshotId}.avro`,
          summary: { operation: 'append' },
          'schema-id': m['current-schema-id'],
        },
      },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId },
    ],
  };
}
