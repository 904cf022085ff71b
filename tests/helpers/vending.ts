/**
 * What credential-vending tests and bench/vending share on a throwaway RGW: the role Floe assumes
 * (trusted by the RGW user `floe`, allowed everything in the bucket; each session policy narrows
 * it to one table) and the S3 storage profile of a catalog that vends through it.
 */
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { CatalogClient } from '../catalog/helpers.js';
import type { RgwStore } from './rgw.js';

export const VENDING_ROLE_ARN = 'arn:aws:iam:::role/floe-vending';

/** Creates the bucket and the role `floe-vending` allowed `s3:*` in it. */
export async function prepareVendingRole(rgw: RgwStore, bucket: string): Promise<void> {
  await rgw.createBucket(bucket);
  const trust = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: ['arn:aws:iam:::user/floe'] }, Action: ['sts:AssumeRole'] }] };
  await rgw.admin(['role', 'create', '--role-name=floe-vending', '--path=/', `--assume-role-policy-doc=${JSON.stringify(trust)}`]);
  const permissions = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`] }] };
  await rgw.admin(['role-policy', 'put', '--role-name=floe-vending', '--policy-name=bucket', `--policy-doc=${JSON.stringify(permissions)}`]);
}

/** The `storage-profile` of `POST /v1/catalogs` for a warehouse at `s3://<bucket>/<keyPrefix>` that vends (unless `vending` is false). */
export function vendingProfile(rgw: RgwStore, bucket: string, keyPrefix: string, vending = true): Record<string, unknown> {
  return {
    type: 's3', bucket, 'key-prefix': keyPrefix, region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true,
    credentials: { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': rgw.secretAccessKey },
    ...(vending ? { 'vended-credentials': { 'role-arn': VENDING_ROLE_ARN, 'duration-seconds': 900 } } : {}),
  };
}

/**
 * What a table's own delegated access reaches of another object in `bucket` (the overlap tests'
 * probe, on RGW itself): the keys of a vended load of `tablePath` try to read `key` ("read the
 * victim" or "refused by RGW (<error>)", or the load's status when it vended nothing), and Floe is
 * asked to sign a GET of it (its status); `message` is the load's error message, if any.
 */
export async function reachOf(client: CatalogClient, rgw: RgwStore, bucket: string, tablePath: string, key: string): Promise<{ vend: string; sign: number; message: string }> {
  const v = await client.get(tablePath, { headers: { 'x-iceberg-access-delegation': 'vended-credentials' } });
  let vend = `status ${v.status}`;
  for (const entry of (v.body['storage-credentials'] ?? []) as { config: Record<string, string> }[]) {
    const c = entry.config;
    const s3 = new S3Client({ endpoint: c['s3.endpoint'], region: c['client.region'], forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: c['s3.access-key-id']!, secretAccessKey: c['s3.secret-access-key']!, sessionToken: c['s3.session-token']! } });
    vend = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key })).then(() => 'read the victim', (e: { name?: string }) => `refused by RGW (${e.name})`);
    s3.destroy();
  }
  // Signing reuses a table's locations for up to a second.
  await new Promise((r) => setTimeout(r, 1100));
  const s = await client.post(`${tablePath}/sign`, { region: rgw.region, method: 'GET', uri: `${rgw.endpoint}/${bucket}/${key}`, headers: {} });
  return { vend, sign: s.status, message: String(v.body?.error?.message ?? '') };
}
