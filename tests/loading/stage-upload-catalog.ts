/**
 * What the stage-upload tests on object stores (stage-uploads-{rgw,azurite,gcs}.test.ts) start
 * from: a test server over an in-memory store with upload caps set, catalog `lake` whose warehouse
 * is `wh` in the store's bucket (container), table `lake.shop.items (id bigint, name string)` and
 * stage `@up` in it, over real HTTP. The store itself, and what it is asked to check, is each test's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import type { ParsedStorageProfile } from '../../catalog/rest/operations/catalogs/common.js';
import { openStore } from '../../catalog/store/open-store.js';
import type { FloeConfig } from '../../server/config.js';
import { listenOnLoopback, type HttpAnswer, type LoopbackClient } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';

export interface StageUploadCatalog {
  readonly http: LoopbackClient;
  /** The bootstrap admin's token (all scopes). */
  readonly token: string;
  /** A temporary directory (the server's data dir is below it), removed after the test. */
  readonly dir: string;
  /** `SHOW STAGES`' URL of `@up`: `<bucket URL>wh/stages/<uuid>/`. */
  readonly stageUrl: string;
  /** The stage's key prefix in the bucket (container): `wh/stages/<uuid>/`. */
  readonly stageKey: string;
  /** Runs `text` on catalog `lake` and returns its rows; anything but a 200 throws. */
  sql(text: string, as?: string): Promise<unknown[][]>;
  /** POSTs `body` with `catalog: 'lake'` added. */
  post(path: string, body: Record<string, unknown>, as?: string): Promise<HttpAnswer>;
}

/**
 * Starts the server and creates the catalog, table and stage. `warehouse.warehouseLocation` is
 * `<bucket URL>wh` (the stage key is checked against it); `loading` overrides the upload caps.
 */
export async function openStageUploadCatalog(
  t: Test,
  warehouse: { readonly warehouseLocation: string; readonly storage: ParsedStorageProfile },
  loading: Partial<FloeConfig['loading']>,
): Promise<StageUploadCatalog> {
  const dir = mkdtempSync(join(tmpdir(), 'floe-uploads-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const server = await startTestServer(await openStore({ kind: 'pglite-memory' }), {
    config: (c) => ({ ...c, data_dir: join(dir, 'data'), loading: { ...c.loading, ...loading } }),
  });
  t.teardown(() => server.close());
  const http = await listenOnLoopback(server);
  const token = await server.token();
  await server.state.catalog.createCatalog({ tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] }, { name: 'lake', ...warehouse });
  const sql = async (text: string, as = token): Promise<unknown[][]> => {
    const r = await http.query(as, { sql: text, catalog: 'lake' });
    if (r.status !== 200) throw new Error(`${text}: ${r.text}`);
    return (r.json as { rows: unknown[][] }).rows;
  };
  const post = (path: string, body: Record<string, unknown>, as = token): Promise<HttpAnswer> =>
    http.request('POST', path, { token: as, body: { catalog: 'lake', ...body } });

  await sql('CREATE SCHEMA lake.shop');
  await sql('CREATE TABLE lake.shop.items (id bigint, name string)');
  await sql('CREATE STAGE up');
  const stageUrl = (await sql('SHOW STAGES'))[0]![2] as string;
  const bucketUrl = warehouse.warehouseLocation.slice(0, warehouse.warehouseLocation.lastIndexOf('/') + 1);
  t.ok(stageUrl.startsWith(bucketUrl), `the stage is in the warehouse's bucket: ${stageUrl}`);
  const stageKey = stageUrl.slice(bucketUrl.length);
  t.match(stageKey, /^wh\/stages\/[0-9a-f-]{36}\/$/, 'below the warehouse');
  return { http, token, dir, stageUrl, stageKey, sql, post };
}
