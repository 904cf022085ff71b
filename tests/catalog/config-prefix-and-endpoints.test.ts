/**
 * GET /v1/config as the service spec says, over real HTTP (issue 16, item 8): the response
 * carries `defaults.prefix` (the `{prefix}` of later paths), keeps `overrides.prefix` where
 * Iceberg clients read it, and advertises its capabilities: `endpoints` lists exactly the Iceberg
 * REST endpoints (the OpenAPI document's paths, in its notation) that the server has a route
 * for, nothing it does not serve and no path of its own.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { onEachBackend } from '../helpers/stores.js';
import { startTestServer } from '../helpers/server.js';
import { listenOnLoopback } from '../helpers/http.js';
import { OPENAPI_SPEC, OpenApiValidator } from '../helpers/openapi.js';

const doc = parseYaml(readFileSync(OPENAPI_SPEC, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
const specEndpoints = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.keys(ops).filter((m) => ['get', 'post', 'put', 'delete', 'head', 'patch'].includes(m)).map((m) => `${m.toUpperCase()} ${path}`));
const validator = OpenApiValidator.load();

interface Config { defaults: Record<string, string>; overrides: Record<string, string>; endpoints: string[]; 'idempotency-key-lifetime'?: string }

await onEachBackend(t, async (t, store) => {
  const server = await startTestServer(store);
  t.teardown(() => server.close());
  const http = await listenOnLoopback(server);
  const admin = await server.token();
  const config = async (query = '') => {
    const r = await http.request('GET', `/v1/config${query}`);
    t.equal(r.status, 200, r.text);
    t.same(validator.validateResponse('GET', '/v1/config', r.status, r.text), [], 'the answer follows the OpenAPI document');
    return r.json as Config;
  };

  await t.test('defaults.prefix names the catalog, overrides.prefix too', async (t) => {
    const plain = await config();
    t.equal(plain.defaults.prefix, 'default', 'without a warehouse: the default catalog');
    t.equal(plain.overrides.prefix, 'default');
    const created = await http.request('POST', '/v1/catalogs', { token: admin, body: { name: 'sales', 'warehouse-location': 's3://bucket/sales', properties: { 'write.format.default': 'parquet' } } });
    t.equal(created.status, 201, created.text);
    const sales = await config('?warehouse=sales');
    t.match(sales.defaults, { prefix: 'sales', 'write.format.default': 'parquet' }, 'the prefix beside the catalog properties');
    t.equal(sales.overrides.prefix, 'sales');
    const listed = await http.request('GET', `/v1/${sales.defaults.prefix}/namespaces`, { token: admin });
    t.equal(listed.status, 200, 'the advertised prefix addresses the catalog');
  });

  await t.test('endpoints: exactly the Iceberg REST endpoints served', async (t) => {
    const { endpoints, 'idempotency-key-lifetime': lifetime } = await config();
    t.equal(lifetime, 'PT30M', 'idempotency keys are a capability too');
    t.equal(new Set(endpoints).size, endpoints.length, 'no endpoint twice');
    for (const e of endpoints) t.ok(specEndpoints.includes(e), `${e} is an Iceberg REST endpoint`);
    const served = specEndpoints.filter((e) => {
      const [method, path] = e.split(' ') as [string, string];
      return server.app.hasRoute({ method: method as 'GET', url: path.replace(/\{([^}]+)\}/g, ':$1') });
    });
    // The credentials and sign endpoints are advertised only for a catalog whose store supports
    // them (the default catalog keeps its files locally; tests/storage/vended-credentials-on-rgw.test.ts
    // checks an S3 catalog's list).
    const storeBound = (e: string): boolean => e.endsWith('/credentials') || e.endsWith('/sign');
    t.same([...endpoints].sort(), served.filter((e) => !storeBound(e)).sort(), 'every served Iceberg endpoint is advertised, and nothing else');
    t.ok(served.some(storeBound), 'the credentials and sign endpoints are served');
    t.ok(endpoints.includes('GET /v1/{prefix}/namespaces') && endpoints.includes('POST /v1/{prefix}/transactions/commit'));
    t.notOk(endpoints.includes('POST /v1/transactions/commit'), 'Floe\'s unprefixed commit path is not an Iceberg endpoint');
  });
});
