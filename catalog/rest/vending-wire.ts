/**
 * The `vended-credentials` object of an S3 storage profile (docs/vending.md):
 * `{"role-arn", "sts-endpoint"?, "duration-seconds"?, "external-id"?}`. Messages name fields,
 * never values.
 */
import { asObject, optionalInt, optionalString, requiredString } from '../iceberg/json-fields.js';
import type { JsonObject, JsonValue } from '../iceberg/json.js';
import {
  DEFAULT_VENDED_DURATION_SECONDS, MAX_VENDED_DURATION_SECONDS, MIN_VENDED_DURATION_SECONDS, type S3VendingConfig,
} from '../../storage-creds/s3-vending.js';
import { badRequest } from './errors.js';
import { checkS3HttpEndpoint, onlyFields } from './profile-fields.js';

export function parseS3VendingConfig(json: JsonValue): S3VendingConfig {
  const what = 'storage-profile vended-credentials';
  const o = asObject(json, what);
  onlyFields(o, ['role-arn', 'sts-endpoint', 'duration-seconds', 'external-id'], what);
  const roleArn = requiredString(o, 'role-arn', what);
  if (!/^arn:[a-z-]+:iam::[0-9A-Za-z-]*:role\/[\w+=,.@/-]{1,512}$/.test(roleArn)) throw badRequest(`Invalid role-arn in ${what}: expected arn:<partition>:iam::<account>:role/<name>`);
  const stsEndpoint = optionalString(o, 'sts-endpoint', what) ?? null;
  if (stsEndpoint !== null) checkS3HttpEndpoint(stsEndpoint, 'sts-endpoint', what);
  const durationSeconds = optionalInt(o, 'duration-seconds', what) ?? DEFAULT_VENDED_DURATION_SECONDS;
  if (durationSeconds < MIN_VENDED_DURATION_SECONDS || durationSeconds > MAX_VENDED_DURATION_SECONDS) {
    throw badRequest(`Invalid duration-seconds in ${what}: expected ${MIN_VENDED_DURATION_SECONDS} to ${MAX_VENDED_DURATION_SECONDS}`);
  }
  const externalId = optionalString(o, 'external-id', what) ?? null;
  return { roleArn, stsEndpoint, durationSeconds, externalId };
}

/** As clients see it: the external id is a shared secret of the trust policy, so it is not shown. */
export function s3VendingConfigToJson(c: S3VendingConfig): JsonObject {
  return {
    'role-arn': c.roleArn,
    ...(c.stsEndpoint !== null ? { 'sts-endpoint': c.stsEndpoint } : {}),
    'duration-seconds': c.durationSeconds,
  };
}
