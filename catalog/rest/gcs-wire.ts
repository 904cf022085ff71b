/**
 * The `gcs` storage profile of a catalog creation (docs/storage.md):
 * `{type: "gcs", bucket, key-prefix?, project-id?, endpoint?, credentials: {type:
 * "service-account-key", service-account-key: <the JSON key, as an object or its text>} | {type:
 * "application-default"}, vended-credentials?: {sts-endpoint?}}`. Messages name fields, never
 * values (a value may be a secret).
 */
import { asObject, field, optionalString, requiredString } from '../iceberg/json-fields.js';
import type { JsonObject } from '../iceberg/json.js';
import { GcsAuthError, parseServiceAccountKey } from '../../storage-creds/gcs-auth.js';
import type { GcsVendingConfig } from '../../storage-creds/gcs-vending.js';
import type { GcsStorageProfile, StorageSecret } from '../../storage-creds/storage-profile.js';
import { badRequest } from './errors.js';
import { httpEndpoint, onlyFields } from './profile-fields.js';

const WHAT = 'storage-profile';

function parseVending(json: unknown): GcsVendingConfig {
  const what = 'storage-profile vended-credentials';
  const o = asObject(json as JsonObject, what);
  onlyFields(o, ['sts-endpoint'], what);
  const sts = optionalString(o, 'sts-endpoint', what);
  return { stsEndpoint: sts === undefined ? null : httpEndpoint(sts, 'sts-endpoint', what) };
}

export function parseGcsStorageProfile(o: JsonObject): { readonly profile: GcsStorageProfile; readonly secret: StorageSecret | null } {
  onlyFields(o, ['type', 'bucket', 'key-prefix', 'project-id', 'endpoint', 'credentials', 'vended-credentials'], WHAT);
  const bucket = requiredString(o, 'bucket', WHAT);
  // GCS bucket names: 3-63 of a-z, 0-9, '-', '_', '.', starting and ending with a letter or digit.
  if (!/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/.test(bucket)) throw badRequest(`Invalid bucket name ${JSON.stringify(bucket)} in ${WHAT}: 3-63 lowercase letters, digits, '-', '_' or '.'`);
  const keyPrefix = (optionalString(o, 'key-prefix', WHAT) ?? '').replace(/^\/+|\/+$/g, '');
  if (keyPrefix.split('/').some((s) => s === '.' || s === '..') || /[\r\n#?]/.test(keyPrefix)) throw badRequest(`Invalid key-prefix in ${WHAT}: no '.' or '..' segments, line breaks, '?' or '#'`);
  const projectId = optionalString(o, 'project-id', WHAT) ?? null;
  if (projectId !== null && !/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/.test(projectId)) throw badRequest(`Invalid project-id ${JSON.stringify(projectId)} in ${WHAT}: 6-30 lowercase letters, digits or '-'`);
  const endpointRaw = optionalString(o, 'endpoint', WHAT);
  const endpoint = endpointRaw === undefined ? null : httpEndpoint(endpointRaw, 'endpoint', WHAT);
  const credentialsJson = field(o, 'credentials');
  if (credentialsJson === undefined || credentialsJson === null) throw badRequest(`Missing field 'credentials' in ${WHAT}`);
  const cwhat = 'storage-profile credentials';
  const c = asObject(credentialsJson, cwhat);
  const source = requiredString(c, 'type', cwhat);
  let secret: StorageSecret | null = null;
  switch (source) {
    case 'service-account-key': {
      onlyFields(c, ['type', 'service-account-key'], cwhat);
      const keyJson = field(c, 'service-account-key');
      if (keyJson === undefined || keyJson === null) throw badRequest(`Missing field 'service-account-key' in ${cwhat}`);
      try {
        // Checked now (a key that cannot sign is a 400, not a failed probe), stored as given.
        parseServiceAccountKey(keyJson);
      } catch (e) {
        if (e instanceof GcsAuthError) throw badRequest(`Invalid service-account-key in ${cwhat}: ${e.message}`);
        throw e;
      }
      secret = { type: 'gcs-service-account-key', key: typeof keyJson === 'string' ? keyJson : JSON.stringify(keyJson) };
      break;
    }
    case 'application-default':
      onlyFields(c, ['type'], cwhat);
      break;
    default:
      throw badRequest(`Unsupported credentials type ${JSON.stringify(source)} in a gcs storage-profile: expected service-account-key or application-default`);
  }
  const vendingJson = field(o, 'vended-credentials');
  const vendedCredentials = vendingJson === undefined || vendingJson === null ? undefined : parseVending(vendingJson);
  return {
    profile: {
      type: 'gcs', bucket, keyPrefix, projectId, endpoint, credentialSource: source,
      ...(vendedCredentials !== undefined ? { vendedCredentials } : {}),
    },
    secret,
  };
}

/** As clients see it: everything but the key. */
export function gcsStorageProfileToJson(p: GcsStorageProfile): JsonObject {
  return {
    type: 'gcs', bucket: p.bucket, 'key-prefix': p.keyPrefix,
    ...(p.projectId !== null ? { 'project-id': p.projectId } : {}),
    ...(p.endpoint !== null ? { endpoint: p.endpoint } : {}),
    credentials: { type: p.credentialSource },
    ...(p.vendedCredentials !== undefined ? { 'vended-credentials': { ...(p.vendedCredentials.stsEndpoint !== null ? { 'sts-endpoint': p.vendedCredentials.stsEndpoint } : {}) } } : {}),
  };
}
