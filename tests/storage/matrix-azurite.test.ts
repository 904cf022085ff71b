/**
 * The warehouse matrix on Azurite (the ADLS path, issue 17 acceptance): the same suites as on RGW
 * (tests/helpers/warehouse-matrix.ts) run unchanged with catalog `default` in an Azurite container
 * (`abfss://…`), declared in an operator file whose account key is an environment reference.
 *
 * FLOE_TEST_MATRIX_SUITES=sql-ddl,tpch runs only the suites whose path contains one of the words.
 */
import t from 'tap';
import { azuriteStorageProfile, onAzurite } from '../helpers/azurite.js';
import { runSuitesOn } from '../helpers/warehouse-matrix.js';

// Ten suites one after another, two at a time: more than tap's default per-file limit.
t.setTimeout(20 * 60_000);

await onAzurite(t, 'suites with catalog default on Azurite', async (t, azurite) => {
  await azurite.createContainer('matrix');
  const runs = await runSuitesOn(t, {
    name: 'azurite',
    storageProfile: azuriteStorageProfile(azurite, 'matrix', 'wh', { credentials: { type: 'shared-key', 'account-key': { env: 'FLOE_TEST_MATRIX_ACCOUNT_KEY' } } }),
    env: { FLOE_TEST_MATRIX_ACCOUNT_KEY: azurite.accountKey },
  });
  t.comment(`matrix on azurite: ${runs.length} suites, ${(runs.reduce((s, r) => s + r.ms, 0) / 1000).toFixed(0)} s of suite time`);
});
