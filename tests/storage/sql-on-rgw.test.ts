/**
 * SQL over a catalog whose warehouse is a bucket on a real Ceph RGW (an `s3` storage profile): the
 * shared body in sql-on-store.suite.ts (DDL, INSERT, CTAS, copy-on-write and merge-on-read
 * UPDATE/DELETE, MERGE and time travel, files landing in the bucket, a second Floe reading them).
 */
import t from 'tap';
import { rgwFixture } from '../helpers/object-store-fixture.js';
import { onRgw } from '../helpers/rgw.js';
import { sqlOnStoreSuite } from './sql-on-store.suite.js';

await onRgw(t, 'SQL on RGW', async (t, rgw) => {
  await sqlOnStoreSuite(t, rgwFixture(rgw));
});
