/**
 * The server's own access to an S3 warehouse through an assumed role (a profile's `role-arn`,
 * `external-id`, `sts-endpoint`): the profile's credentials call STS `AssumeRole` and the S3
 * client signs with the session. A session is reused until `refreshBeforeMs` before it expires,
 * then replaced by one new call shared by every request that needs it meanwhile (single flight);
 * a failed refresh is not cached, so the next request tries again.
 */
import { randomUUID } from 'node:crypto';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { S3Credentials } from './s3-file-io.js';

/** Temporary keys with their expiry, as the AWS SDK's credential providers return them. */
export interface ExpiringS3Credentials extends S3Credentials {
  readonly sessionToken: string;
  readonly expiration: Date;
}

export type AssumeRoleCall = () => Promise<ExpiringS3Credentials>;

export interface AssumedRoleOptions {
  readonly assumeRole: AssumeRoleCall;
  /** Replace a session this long before it expires (default 5 minutes). */
  readonly refreshBeforeMs?: number;
  readonly now?: () => number;
}

/** A credentials provider (what the SDK's `credentials` accepts) over `assumeRole`, cached as above. */
export function assumedRoleProvider(options: AssumedRoleOptions): () => Promise<ExpiringS3Credentials> {
  const margin = options.refreshBeforeMs ?? 5 * 60_000;
  const now = options.now ?? Date.now;
  let current: Promise<ExpiringS3Credentials> | undefined;
  let expiresAt = 0;
  return async () => {
    if (current === undefined || now() >= expiresAt - margin) {
      const call = options.assumeRole();
      current = call;
      expiresAt = Number.POSITIVE_INFINITY; // until the call answers: concurrent callers share it
      try {
        const c = await call;
        if (current === call) expiresAt = c.expiration.getTime();
      } catch (e) {
        if (current === call) current = undefined;
        throw e;
      }
    }
    return current;
  };
}

/** STS `AssumeRole` with `base` (the profile's keys, or the default chain when undefined). */
export function stsAssumeRoleCall(options: {
  readonly region: string; readonly endpoint: string | null; readonly base: S3Credentials | undefined;
  readonly roleArn: string; readonly externalId: string | null; readonly durationSeconds?: number;
}): { readonly call: AssumeRoleCall; readonly destroy: () => void } {
  const client = new STSClient({
    region: options.region,
    ...(options.endpoint !== null ? { endpoint: options.endpoint } : {}),
    ...(options.base !== undefined ? { credentials: { ...options.base } } : {}),
    maxAttempts: 3,
  });
  return {
    async call() {
      const out = await client.send(new AssumeRoleCommand({
        RoleArn: options.roleArn, RoleSessionName: `floe-${randomUUID().slice(0, 8)}`, DurationSeconds: options.durationSeconds ?? 3600,
        ...(options.externalId !== null ? { ExternalId: options.externalId } : {}),
      }));
      const c = out.Credentials;
      if (c?.AccessKeyId === undefined || c.SecretAccessKey === undefined || c.SessionToken === undefined || c.Expiration === undefined) {
        throw new Error('STS AssumeRole answered without credentials');
      }
      return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
    },
    destroy: () => client.destroy(),
  };
}
