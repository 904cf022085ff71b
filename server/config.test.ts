import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DEFAULT_CONFIG, loadConfig } from './config.js';

const dir = mkdtempSync(join(tmpdir(), 'floe-config-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

t.test('defaults with an empty environment', async (t) => {
  t.same(loadConfig({ env: {} }), DEFAULT_CONFIG);
});

t.test('YAML and JSON files, then environment, then flags', async (t) => {
  const yaml = file('a.yaml', 'server:\n  port: 9000\nauth:\n  access_token_ttl_seconds: 600\n');
  t.equal(loadConfig({ file: yaml, env: {} }).server.port, 9000);
  t.equal(loadConfig({ file: yaml, env: {} }).server.host, '127.0.0.1', 'defaults fill what the file leaves out');
  const json = file('a.json', JSON.stringify({ store: { database_url: 'postgres://x@127.0.0.1/db' } }));
  t.equal(loadConfig({ file: json, env: {} }).store.database_url, 'postgres://x@127.0.0.1/db');
  const c = loadConfig({ file: yaml, env: { FLOE_PORT: '9100', FLOE__AUTH__AUDIENCE: 'warehouse', DATABASE_URL: 'postgresql://p@h/d' }, overrides: { server: { port: 9200 } } });
  t.equal(c.server.port, 9200, 'flags win');
  t.equal(c.auth.audience, 'warehouse', 'FLOE__SECTION__KEY');
  t.equal(c.store.database_url, 'postgresql://p@h/d');
  t.equal(c.auth.access_token_ttl_seconds, 600);
  t.same(loadConfig({ env: { FLOE_MANAGEMENT_LISTEN: '127.0.0.1:9090' } }).management, { host: '127.0.0.1', port: 9090 });
  t.equal(loadConfig({ env: { FLOE_CONFIG: yaml } }).server.port, 9000, 'FLOE_CONFIG names the file');
});

t.test('a bad key or value stops the start with a message naming it', async (t) => {
  t.throws(() => loadConfig({ file: file('b.yaml', 'server:\n  prot: 1\n'), env: {} }), { name: 'ConfigError', message: /unknown key server\.prot/ });
  t.throws(() => loadConfig({ file: file('c.yaml', 'colour: blue\n'), env: {} }), /unknown key colour/);
  t.throws(() => loadConfig({ file: file('d.yaml', 'server:\n  port: http\n'), env: {} }), /server\.port: must be integer/);
  t.throws(() => loadConfig({ env: { FLOE_PORT: '70000' } }), /server\.port: must be <= 65535/);
  t.throws(() => loadConfig({ env: { FLOE_LOG_LEVEL: 'loud' } }), /logging\.level: must be one of/);
  t.throws(() => loadConfig({ env: { FLOE_PROT: '1' } }), /unknown environment variable FLOE_PROT/);
  t.throws(() => loadConfig({ env: { DATABASE_URL: 'mysql://x' } }), /store\.database_url/);
  t.throws(() => loadConfig({ file: file('e.yaml', 'server: [1\n'), env: {} }), /not valid YAML/);
  t.throws(() => loadConfig({ file: file('f.json', '{"a":'), env: {} }), /not valid JSON/);
  t.throws(() => loadConfig({ file: join(dir, 'missing.yaml'), env: {} }), /cannot read configuration file/);
  t.throws(() => loadConfig({ file: file('g.json', '{"__proto__": {"x": 1}}'), env: {} }), ConfigError);
  t.throws(() => loadConfig({ env: { FLOE_MANAGEMENT_LISTEN: '9090' } }), /host:port/);
});
