/**
 * `floe admin create-catalog` with an `adls` storage profile from a file, against Azurite: checked
 * with a probe object like `POST /v1/catalogs`, a wrong account key refused (exit 2) with the cause
 * and without the key, a good profile stored with its key sealed.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../catalog/store/open-store.js';
import { runCli } from '../helpers/cli.js';
import { azuriteStorageProfile, onAzurite } from '../helpers/azurite.js';

await onAzurite(t, 'create-catalog from the CLI on Azurite', async (t, azurite) => {
  await azurite.createContainer('clicontainer');
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-cli-adls-'));
  const common = ['--data-dir', dataDir];
  const profileFile = (name: string, key: string): string => {
    const file = join(dataDir, `${name}.json`);
    writeFileSync(file, JSON.stringify(azuriteStorageProfile(azurite, 'clicontainer', name, { credentials: { type: 'shared-key', 'account-key': key } })));
    return file;
  };

  const wrongKey = randomBytes(64).toString('base64');
  const bad = runCli(['admin', 'create-catalog', 'wrong', '--storage-profile', profileFile('wrong', wrongKey), ...common]);
  t.equal(bad.status, 2, 'a profile that fails its check: exit 2');
  t.match(bad.stderr, /Storage profile check failed: could not write a probe object: access denied/);
  t.notOk((bad.stderr + bad.stdout).includes(wrongKey), 'the key is not printed');

  const good = runCli(['admin', 'create-catalog', 'lake', '--storage-profile', profileFile('lake', azurite.accountKey), ...common]);
  t.equal(good.status, 0, good.stderr);
  const warehouse = `abfss://clicontainer@${azurite.accountName}.dfs.core.windows.net/lake`;
  t.match(good.stdout, `Catalog lake created in tenant default: ${warehouse} (storage profile checked)`);
  t.notOk((good.stdout + good.stderr).includes(azurite.accountKey));

  const store = await openStore({ kind: 'pglite', dataDir });
  t.teardown(() => store.close());
  const row = (await store.query<{ warehouse_location: string; storage_secret_sealed: string }>("SELECT warehouse_location, storage_secret_sealed FROM catalogs WHERE name = 'lake'")).rows[0];
  t.equal(row?.warehouse_location, warehouse);
  t.ok(row?.storage_secret_sealed.startsWith('v1:') && !row.storage_secret_sealed.includes(azurite.accountKey), 'the key is sealed');
});
