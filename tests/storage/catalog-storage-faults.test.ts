/**
 * A catalog on RGW whose store fails under it, over HTTP: the shared body in
 * catalog-storage-faults.suite.ts (S3 `SlowDown` throttling and transient 5xx retried, a store that
 * keeps failing or is stopped gives 503 and leaves the last committed metadata, commits succeed
 * again once it is back).
 */
import t from 'tap';
import { rgwFixture } from '../helpers/object-store-fixture.js';
import { onRgw } from '../helpers/rgw.js';
import { catalogStorageFaultsSuite } from './catalog-storage-faults.suite.js';

await onRgw(t, 'object-store faults under a catalog', async (t, rgw) => {
  await catalogStorageFaultsSuite(t, rgwFixture(rgw));
});
