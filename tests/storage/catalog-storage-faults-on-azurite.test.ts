/**
 * A catalog on Azurite whose store fails under it, over HTTP (the RGW suite's twin for the ADLS
 * FileIO): the shared body in catalog-storage-faults.suite.ts (503 `ServerBusy` throttling and
 * transient 500s retried, a store that keeps failing or is stopped gives 503 and leaves the last
 * committed metadata, commits succeed again once it is back).
 */
import t from 'tap';
import { azuriteFixture } from '../helpers/object-store-fixture.js';
import { onAzurite } from '../helpers/azurite.js';
import { catalogStorageFaultsSuite } from './catalog-storage-faults.suite.js';

await onAzurite(t, 'object-store faults under a catalog on Azurite', async (t, azurite) => {
  await catalogStorageFaultsSuite(t, azuriteFixture(azurite));
});
