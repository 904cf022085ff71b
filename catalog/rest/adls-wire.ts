/**
 * The `adls` storage profile of a catalog creation (docs/storage.md):
 * `{type: "adls", account-name, filesystem, key-prefix?, endpoint-suffix?, endpoint?,
 * hierarchical-namespace?, credentials, vended-credentials?: {duration-seconds?}}` where
 * `credentials` is `{type: "shared-key", account-key}` or `{type: "client-credentials", tenant-id,
 * client-id, client-secret, authority-host?}` (an Entra ID service principal). Messages name
 * fields, never values (a value may be a secret).
 */
import { asObject, field, optionalInt, optionalString, requiredString } from '../iceberg/json-fields.js';
import type { JsonObject } from '../iceberg/json.js';
import {
  DEFAULT_ADLS_SAS_SECONDS, MAX_ADLS_SAS_SECONDS, MIN_ADLS_SAS_SECONDS, type AdlsVendingConfig,
} from '../../storage-creds/adls-vending.js';
import type { AdlsStorageProfile, StorageSecret } from '../../storage-creds/storage-profile.js';
import type { EntraServicePrincipal } from '../../storage-creds/entra-auth.js';
import { badRequest } from './errors.js';
import { httpEndpoint, onlyFields } from './profile-fields.js';

const WHAT = 'storage-profile';

function parseVending(json: unknown): AdlsVendingConfig {
  const what = 'storage-profile vended-credentials';
  const o = asObject(json as JsonObject, what);
  onlyFields(o, ['duration-seconds'], what);
  const durationSeconds = optionalInt(o, 'duration-seconds', what) ?? DEFAULT_ADLS_SAS_SECONDS;
  if (durationSeconds < MIN_ADLS_SAS_SECONDS || durationSeconds > MAX_ADLS_SAS_SECONDS) {
    throw badRequest(`Invalid duration-seconds in ${what}: expected ${MIN_ADLS_SAS_SECONDS} to ${MAX_ADLS_SAS_SECONDS}`);
  }
  return { durationSeconds };
}

const CREDENTIALS = 'storage-profile credentials';
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type AdlsCredentials =
  | { readonly source: 'shared-key'; readonly secret: StorageSecret }
  | { readonly source: 'client-credentials'; readonly principal: EntraServicePrincipal; readonly secret: StorageSecret };

function parseCredentials(json: unknown): AdlsCredentials {
  if (json === undefined || json === null) throw badRequest(`Missing field 'credentials' in ${WHAT}`);
  const c = asObject(json as JsonObject, CREDENTIALS);
  const source = requiredString(c, 'type', CREDENTIALS);
  switch (source) {
    case 'shared-key': {
      onlyFields(c, ['type', 'account-key'], CREDENTIALS);
      const accountKey = requiredString(c, 'account-key', CREDENTIALS);
      if (accountKey === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(accountKey)) throw badRequest(`Invalid account-key in ${CREDENTIALS}: expected the base64 storage account key`);
      return { source, secret: { type: 'adls-shared-key', accountKey } };
    }
    case 'client-credentials': {
      onlyFields(c, ['type', 'tenant-id', 'client-id', 'client-secret', 'authority-host'], CREDENTIALS);
      const tenantId = requiredString(c, 'tenant-id', CREDENTIALS);
      // A GUID or a verified domain (contoso.onmicrosoft.com): the identity library's own rule.
      if (!/^[0-9A-Za-z.-]{1,253}$/.test(tenantId)) throw badRequest(`Invalid tenant-id in ${CREDENTIALS}: expected the directory (tenant) id, a GUID, or its domain name`);
      const clientId = requiredString(c, 'client-id', CREDENTIALS);
      if (!GUID.test(clientId)) throw badRequest(`Invalid client-id in ${CREDENTIALS}: expected the application (client) id, a GUID`);
      const clientSecret = requiredString(c, 'client-secret', CREDENTIALS);
      if (clientSecret === '' || clientSecret.length > 1024 || /[\u0000-\u001f\u007f]/.test(clientSecret)) throw badRequest(`Invalid client-secret in ${CREDENTIALS}: expected the client secret's value`);
      const hostRaw = optionalString(c, 'authority-host', CREDENTIALS);
      const authorityHost = hostRaw === undefined ? null : authorityHostOf(hostRaw);
      return { source, principal: { tenantId, clientId, authorityHost }, secret: { type: 'adls-client-secret', clientSecret } };
    }
    default:
      throw badRequest(`Unsupported credentials type ${JSON.stringify(source)} in an adls storage-profile: expected shared-key or client-credentials`);
  }
}

/** An https:// origin (Entra ID's host): MSAL refuses any other authority, and a path would be read as part of the tenant. */
function authorityHostOf(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || url.pathname.replace(/\/+$/, '') !== '') {
    throw badRequest(`Invalid authority-host in ${CREDENTIALS}: expected an https:// host such as https://login.microsoftonline.us, without a path`);
  }
  return url.origin;
}

export function parseAdlsStorageProfile(o: JsonObject): { readonly profile: AdlsStorageProfile; readonly secret: StorageSecret } {
  onlyFields(o, ['type', 'account-name', 'filesystem', 'key-prefix', 'endpoint-suffix', 'endpoint', 'hierarchical-namespace', 'credentials', 'vended-credentials'], WHAT);
  const accountName = requiredString(o, 'account-name', WHAT);
  // Azure's rules: 3-24 lowercase letters and digits.
  if (!/^[a-z0-9]{3,24}$/.test(accountName)) throw badRequest(`Invalid account-name ${JSON.stringify(accountName)} in ${WHAT}: 3-24 lowercase letters or digits`);
  const filesystem = requiredString(o, 'filesystem', WHAT);
  // Container naming: 3-63 of a-z, 0-9 and single '-', starting and ending with a letter or digit.
  if (!/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/.test(filesystem)) throw badRequest(`Invalid filesystem ${JSON.stringify(filesystem)} in ${WHAT}: 3-63 lowercase letters, digits or single '-'`);
  const keyPrefix = (optionalString(o, 'key-prefix', WHAT) ?? '').replace(/^\/+|\/+$/g, '');
  if (keyPrefix.split('/').some((s) => s === '.' || s === '..') || /[?#\\]/.test(keyPrefix)) throw badRequest(`Invalid key-prefix in ${WHAT}: no '.' or '..' segments, '?', '#' or '\\'`);
  const endpointSuffix = (optionalString(o, 'endpoint-suffix', WHAT) ?? 'core.windows.net').toLowerCase();
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(endpointSuffix)) throw badRequest(`Invalid endpoint-suffix in ${WHAT}: expected a DNS suffix such as core.windows.net`);
  const endpointRaw = optionalString(o, 'endpoint', WHAT);
  const endpoint = endpointRaw === undefined ? null : httpEndpoint(endpointRaw, 'endpoint', WHAT);
  const hns = field(o, 'hierarchical-namespace');
  if (hns !== undefined && hns !== null && typeof hns !== 'boolean') throw badRequest(`Invalid hierarchical-namespace in ${WHAT}: expected true or false`);
  const hierarchicalNamespace = hns === true;
  const credentials = parseCredentials(field(o, 'credentials'));
  if (credentials.source === 'client-credentials' && endpoint !== null && endpoint.startsWith('http:')) {
    throw badRequest(`Invalid endpoint in ${WHAT}: client-credentials send a bearer token, which Azure Storage accepts over https:// only`);
  }
  const vendingJson = field(o, 'vended-credentials');
  const vendedCredentials = vendingJson === undefined || vendingJson === null ? undefined : parseVending(vendingJson);
  if (vendedCredentials !== undefined && !hierarchicalNamespace) {
    throw badRequest(`Invalid vended-credentials in ${WHAT}: a SAS can be limited to a table's directory only on an account with a hierarchical namespace (set hierarchical-namespace: true for ADLS Gen2); on a plain Blob container it would reach every table`);
  }
  const fields = {
    type: 'adls', accountName, filesystem, keyPrefix, endpointSuffix, endpoint, hierarchicalNamespace,
    ...(vendedCredentials !== undefined ? { vendedCredentials } : {}),
  } as const;
  const profile: AdlsStorageProfile = credentials.source === 'shared-key'
    ? { ...fields, credentialSource: 'shared-key' }
    : { ...fields, credentialSource: 'client-credentials', servicePrincipal: credentials.principal };
  return { profile, secret: credentials.secret };
}

/** The credentials as clients see them: the type, and for a service principal who it is; never a key or secret. */
function credentialsToJson(p: AdlsStorageProfile): JsonObject {
  switch (p.credentialSource) {
    case 'shared-key':
      return { type: 'shared-key' };
    case 'client-credentials':
      return {
        type: 'client-credentials', 'tenant-id': p.servicePrincipal.tenantId, 'client-id': p.servicePrincipal.clientId,
        ...(p.servicePrincipal.authorityHost !== null ? { 'authority-host': p.servicePrincipal.authorityHost } : {}),
      };
  }
}

/** As clients see it: everything but the key or client secret. */
export function adlsStorageProfileToJson(p: AdlsStorageProfile): JsonObject {
  return {
    type: 'adls', 'account-name': p.accountName, filesystem: p.filesystem, 'key-prefix': p.keyPrefix, 'endpoint-suffix': p.endpointSuffix,
    ...(p.endpoint !== null ? { endpoint: p.endpoint } : {}),
    'hierarchical-namespace': p.hierarchicalNamespace,
    credentials: credentialsToJson(p),
    ...(p.vendedCredentials !== undefined ? { 'vended-credentials': { 'duration-seconds': p.vendedCredentials.durationSeconds } } : {}),
  };
}
