/**
 * `floe admin create-catalog` with a storage profile from a file, against a real RGW: the profile is
 * checked with a probe object like `POST /v1/catalogs` does, a bad one is refused (exit 2) with the
 * cause and without the secret, and a good one is stored with its keys sealed.
 */
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../catalog/store/open-store.js';
import { runCli } from '../helpers/cli.js';
import { onRgw } from '../helpers/rgw.js';

await onRgw(t, 'create-catalog from the CLI', async (t, rgw) => {
  await rgw.createBucket('clibucket');
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-cli-catalog-'));
  const common = ['--data-dir', dataDir];
  const profileFile = (name: string, secret: string): string => {
    const file = join(dataDir, `${name}.json`);
    writeFileSync(file, JSON.stringify({
      type: 's3', bucket: 'clibucket', 'key-prefix': name, region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true,
      credentials: { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': secret },
    }));
    return file;
  };
  const quiet = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

  const bad = runCli(['admin', 'create-catalog', 'wrong', '--storage-profile', profileFile('wrong', 'not-the-secret-at-all'), ...common], quiet);
  t.equal(bad.status, 2, 'a profile that fails its check: exit 2');
  t.match(bad.stderr, /Storage profile check failed: could not write a probe object: access denied/);
  t.notMatch(bad.stderr + bad.stdout, /not-the-secret-at-all/, 'the secret is not printed');
  t.notMatch(bad.stderr, /usage:/, 'no usage text for a refused profile');
  t.equal(runCli(['admin', 'create-catalog', 'x', ...common], quiet).status, 2, 'neither --warehouse nor --storage-profile');

  const good = runCli(['admin', 'create-catalog', 'lake', '--storage-profile', profileFile('lake', rgw.secretAccessKey), ...common], quiet);
  t.equal(good.status, 0, good.stderr);
  t.match(good.stdout, /Catalog lake created in tenant default: s3:\/\/clibucket\/lake \(storage profile checked\)/);
  t.notMatch(good.stdout + good.stderr, new RegExp(rgw.secretAccessKey));
  const again = runCli(['admin', 'create-catalog', 'lake', '--storage-profile', profileFile('lake', rgw.secretAccessKey), ...common], quiet);
  t.equal(again.status, 2, 'a taken name');
  t.match(again.stderr, /Catalog already exists: lake/);

  const store = await openStore({ kind: 'pglite', dataDir });
  t.teardown(() => store.close());
  const row = (await store.query<{ warehouse_location: string; storage_secret_sealed: string }>("SELECT warehouse_location, storage_secret_sealed FROM catalogs WHERE name = 'lake'")).rows[0];
  t.equal(row?.warehouse_location, 's3://clibucket/lake');
  t.ok(row?.storage_secret_sealed.startsWith('v1:') && !row.storage_secret_sealed.includes(rgw.secretAccessKey), 'the keys are sealed');
});
