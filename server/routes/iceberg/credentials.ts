/**
 * Credential vending on the Iceberg routes (docs/vending.md): what a load, create or register adds
 * when the client asks with `X-Iceberg-Access-Delegation: vended-credentials`, and the
 * `/credentials` endpoints. The minting itself is `storage-creds/s3-vending.ts`; this file decides
 * which locations a table may be given access to (only inside its catalog's warehouse), in which
 * mode (by the token's scopes), and keeps one vendor (one STS client and session cache) per catalog.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { asArray, asObject, field, requiredString } from '../../../catalog/iceberg/json-fields.js';
import type { JsonObject, JsonValue } from '../../../catalog/iceberg/json.js';
import type { TableMetadata } from '../../../catalog/iceberg/table-metadata.js';
import type { CatalogContext, EntityIdent } from '../../../catalog/rest/context.js';
import { NAMESPACE_SEPARATOR } from '../../../catalog/rest/context.js';
import { storageSecretPurpose } from '../../../catalog/rest/deps.js';
import { badRequest, CatalogError, toCatalogError } from '../../../catalog/rest/errors.js';
import type { LoadedTable } from '../../../catalog/rest/loaded.js';
import { requireCatalog } from '../../../catalog/rest/resolve.js';
import type { CatalogRecord } from '../../../catalog/rest/store.js';
import { isS3Location, parseS3Location } from '../../../storage-creds/s3-file-io.js';
import { SignRefusedError, authorizeSign, signS3Request } from '../../../storage-creds/s3-signing.js';
import {
  S3CredentialVendor, VendingError, s3PrefixOf, s3CredentialConfig, stsAssumeRole, type AccessMode,
} from '../../../storage-creds/s3-vending.js';
import { s3Credentials, type S3StorageProfile, type StorageSecret } from '../../../storage-creds/storage-profile.js';
import type { RemoteSignRequest } from '../../../storage-creds/s3-signing.js';
import type { FloeState } from '../../state.js';
import { catalogContext, entityOf, prefixOf, sendJson } from './http.js';

/** Table properties that put files outside the table's location (Iceberg's names). */
const LOCATION_PROPERTIES = ['write.data.path', 'write.metadata.path', 'write.object-storage.path', 'write.folder-storage.path'] as const;

/** What the client asked for in `X-Iceberg-Access-Delegation` (a comma-separated list). */
export interface DelegationRequest {
  readonly vendedCredentials: boolean;
  readonly remoteSigning: boolean;
}

export function delegationOf(req: FastifyRequest): DelegationRequest {
  const raw = req.headers['x-iceberg-access-delegation'];
  const words = (Array.isArray(raw) ? raw.join(',') : raw ?? '').split(',').map((w) => w.trim().toLowerCase());
  return { vendedCredentials: words.includes('vended-credentials'), remoteSigning: words.includes('remote-signing') };
}

/** One `storage-credentials` entry. */
export interface StorageCredential {
  readonly prefix: string;
  readonly config: ReadonlyMap<string, string>;
}

export function storageCredentialToJson(c: StorageCredential): JsonObject {
  return { prefix: c.prefix, config: Object.fromEntries(c.config) };
}

/** Read-write for a token that may write tables, read-only otherwise. */
export function accessModeOf(req: FastifyRequest): AccessMode {
  return req.auth?.scopes.has('table:write') === true ? 'read-write' : 'read';
}

/** Whether `location` is `base` or below it (path-segment boundary, same bucket). */
function within(location: string, base: string): boolean {
  const l = parseS3Location(location);
  const b = parseS3Location(base);
  if (l.bucket !== b.bucket) return false;
  const baseKey = b.key.replace(/\/+$/, '');
  if (baseKey === '') return true;
  const key = l.key.replace(/\/+$/, '');
  return key === baseKey || key.startsWith(`${baseKey}/`);
}

/** A key with `.` or `..` segments names another place to any client that normalizes paths. */
function plainKey(location: string): boolean {
  const { key } = parseS3Location(location);
  return !key.split('/').some((seg) => seg === '..' || seg === '.');
}

/**
 * The table's storage locations (its location, then any location properties elsewhere), each
 * checked to lie inside the catalog's warehouse. Anything else gets no credential: 403 naming it.
 */
export function tableLocations(catalog: CatalogRecord, profile: S3StorageProfile, metadata: TableMetadata): readonly string[] {
  const found: { what: string; location: string }[] = [{ what: 'location', location: metadata.location }];
  for (const p of LOCATION_PROPERTIES) {
    const v = metadata.properties.get(p);
    if (v !== undefined && v !== '') found.push({ what: p, location: v });
  }
  const out: string[] = [];
  for (const { what, location } of found) {
    const ok = isS3Location(location) && isS3Location(catalog.warehouseLocation) && parseS3Location(location).bucket === profile.bucket
      && plainKey(location) && within(location, catalog.warehouseLocation);
    if (!ok) throw new CatalogError('ForbiddenException', `No storage credentials: the table's ${what} ${location} is outside the catalog's warehouse ${catalog.warehouseLocation}`);
    // A location inside one already covered needs no entry of its own.
    if (!out.some((o) => within(location, o))) out.push(location.replace(/\/+$/, ''));
  }
  return out;
}

/** `v1/{prefix}/namespaces/{ns}/tables/{table}/credentials`, relative to the catalog URI as clients resolve it. */
export function refreshEndpointOf(catalogName: string, ident: EntityIdent): string {
  const enc = (s: string): string => encodeURIComponent(s);
  return `v1/${enc(catalogName)}/namespaces/${enc(ident.namespace.join(NAMESPACE_SEPARATOR))}/tables/${enc(ident.name)}/credentials`;
}

/** Vendors by catalog id, for one server (profiles never change, so neither does a vendor). */
export class CredentialVending {
  private readonly vendors = new Map<string, { readonly vendor: S3CredentialVendor; readonly destroy: () => void }>();

  constructor(private readonly state: FloeState) {}

  /** The catalog's own S3 keys (undefined: the SDK's default chain). */
  ownCredentials(catalog: CatalogRecord, profile: S3StorageProfile): ReturnType<typeof s3Credentials> {
    let secret: StorageSecret | null = null;
    if (catalog.storageSecretSealed !== null) {
      const box = this.state.catalog.deps.secrets;
      if (box === undefined) throw new Error('catalog storage secrets cannot be opened: no server key');
      secret = JSON.parse(box.open(catalog.storageSecretSealed, storageSecretPurpose(catalog.id))) as StorageSecret;
    }
    return s3Credentials(profile, secret);
  }

  private vendorOf(catalog: CatalogRecord, profile: S3StorageProfile): S3CredentialVendor | undefined {
    const config = profile.vendedCredentials;
    if (config === undefined) return undefined;
    const known = this.vendors.get(catalog.id);
    if (known !== undefined) return known.vendor;
    const sts = stsAssumeRole({ region: profile.region, endpoint: config.stsEndpoint ?? profile.endpoint, credentials: this.ownCredentials(catalog, profile) });
    const vendor = new S3CredentialVendor(config, sts.assumeRole, () => this.state.clock.now());
    this.vendors.set(catalog.id, { vendor, destroy: sts.destroy });
    return vendor;
  }

  /**
   * The `storage-credentials` of a table for the caller, or none when its catalog's storage needs
   * none (local files) or cannot mint any (no `vended-credentials` in the profile).
   */
  async credentialsFor(ctx: CatalogContext, catalogName: string, catalog: CatalogRecord | undefined, ident: EntityIdent, metadata: TableMetadata, mode: AccessMode, required = false): Promise<readonly StorageCredential[]> {
    const record = catalog ?? await requireCatalog(this.state.store, ctx, catalogName);
    const profile = record.storageProfile;
    if (profile === null) return [];
    const vendor = this.vendorOf(record, profile);
    if (vendor === undefined) {
      if (!required) return [];
      throw badRequest(`Catalog ${catalogName} cannot vend credentials: its storage profile has no vended-credentials`);
    }
    const locations = tableLocations(record, profile, metadata);
    let minted;
    try {
      minted = await vendor.vend(locations, mode);
    } catch (e) {
      if (e instanceof VendingError) throw new CatalogError('ServiceUnavailableException', `Could not vend storage credentials: ${e.message}`, { cause: e });
      throw e;
    }
    const config = s3CredentialConfig(minted, profile, refreshEndpointOf(catalogName, ident));
    return locations.map((prefix) => ({ prefix: `${prefix}/`, config }));
  }

  /**
   * The same for a loaded table (load, create, register). A token without `table:data` gets none
   * (the load itself still answers: Java clients send the header on every load by default).
   */
  async forLoaded(req: FastifyRequest, ctx: CatalogContext, catalogName: string, t: LoadedTable): Promise<readonly StorageCredential[]> {
    if (req.auth?.scopes.has('table:data') !== true) return [];
    return this.credentialsFor(ctx, catalogName, t.catalog, t.ident, t.metadata, accessModeOf(req));
  }

  /**
   * The load `config` that turns on remote signing (`s3.remote-signing-enabled`, `s3.signer.uri`,
   * `s3.signer.endpoint`) for a table of an S3 catalog; none for a catalog on local storage.
   */
  async signingConfig(req: FastifyRequest, ctx: CatalogContext, catalogName: string, t: LoadedTable): Promise<ReadonlyMap<string, string> | undefined> {
    if (req.auth?.scopes.has('table:data') !== true) return undefined;
    const record = t.catalog ?? await requireCatalog(this.state.store, ctx, catalogName);
    const profile = record.storageProfile;
    if (profile === null) return undefined;
    tableLocations(record, profile, t.metadata); // refuses a table whose files lie outside the warehouse
    const enc = encodeURIComponent;
    return new Map([
      ['s3.remote-signing-enabled', 'true'],
      ['s3.signer.uri', `${req.protocol}://${req.headers.host ?? 'localhost'}`],
      ['s3.signer.endpoint', `v1/${enc(catalogName)}/namespaces/${enc(t.ident.namespace.join(NAMESPACE_SEPARATOR))}/tables/${enc(t.ident.name)}/sign`],
      ['client.region', profile.region],
      ['s3.region', profile.region],
      ...(profile.endpoint !== null ? [['s3.endpoint', profile.endpoint] as [string, string]] : []),
      ['s3.path-style-access', String(profile.pathStyleAccess)],
    ]);
  }

  close(): void {
    for (const v of this.vendors.values()) v.destroy();
    this.vendors.clear();
  }
}

function parseSignRequest(json: JsonValue | undefined): RemoteSignRequest {
  if (json === undefined) throw badRequest('Missing request body: expected a RemoteSignRequest');
  const what = 'RemoteSignRequest';
  const o = asObject(json, what);
  const provider = field(o, 'provider');
  if (provider !== undefined && provider !== null && provider !== 's3') throw badRequest(`Unsupported provider in ${what}: only s3 is signed`);
  const headersJson = asObject(field(o, 'headers') ?? null, `${what} headers`);
  const headers = new Map<string, readonly string[]>();
  for (const [name, values] of Object.entries(headersJson)) {
    const list = asArray(values, `${what} headers.${name}`);
    headers.set(name, list.map((v) => {
      if (typeof v !== 'string') throw badRequest(`Cannot parse non-string header value of ${name} in ${what}`);
      return v;
    }));
  }
  const body = field(o, 'body');
  if (body !== undefined && body !== null && typeof body !== 'string') throw badRequest(`Cannot parse non-string 'body' in ${what}`);
  return {
    region: requiredString(o, 'region', what), uri: requiredString(o, 'uri', what), method: requiredString(o, 'method', what), headers,
    ...(typeof body === 'string' ? { body } : {}),
  };
}

/** Tables per batch request: each may cost an STS call when the cache is cold. */
export const MAX_BATCH_TABLES = 100;

function parseBatch(json: JsonValue | undefined): readonly EntityIdent[] {
  if (json === undefined) throw badRequest('Missing request body: expected {"tables": [{"namespace": [...], "name": "..."}]}');
  const o = asObject(json, 'LoadCredentialsBatchRequest');
  for (const k of Object.keys(o)) if (k !== 'tables') throw badRequest(`Unknown field '${k}' in LoadCredentialsBatchRequest`);
  const tables = field(o, 'tables');
  if (tables === undefined || tables === null) throw badRequest('Missing field \'tables\' in LoadCredentialsBatchRequest');
  const list = asArray(tables, 'tables');
  if (list.length === 0) throw badRequest('Empty tables in LoadCredentialsBatchRequest');
  if (list.length > MAX_BATCH_TABLES) throw badRequest(`Too many tables in LoadCredentialsBatchRequest: ${list.length} (at most ${MAX_BATCH_TABLES})`);
  return list.map((t, i) => {
    const to = asObject(t, `tables[${i}]`);
    const ns = asArray(field(to, 'namespace') ?? null, `tables[${i}].namespace`).map((l, j) => {
      if (typeof l !== 'string') throw badRequest(`Cannot parse non-string tables[${i}].namespace[${j}]`);
      return l;
    });
    return { namespace: ns, name: requiredString(to, 'name', `tables[${i}]`) };
  });
}

/**
 * `GET`/`POST {table}/credentials` (LoadCredentialsResponse) and `POST /v1/{catalog}/tables/credentials/batch`:
 * `{"tables": [TableIdentifier…]}` → `{"results": [{identifier, storage-credentials} | {identifier, error}]}`,
 * one result per table in request order, a table's failure in its own result.
 */
export function registerCredentialRoutes(app: FastifyInstance, state: FloeState, vending: CredentialVending): void {
  const TABLE = '/v1/:prefix/namespaces/:namespace/tables/:table';
  const loadCredentials = async (req: FastifyRequest, ident: EntityIdent): Promise<readonly StorageCredential[]> => {
    const ctx = catalogContext(req);
    const t = await state.catalog.loadTable(ctx, prefixOf(req), ident);
    return vending.credentialsFor(ctx, prefixOf(req), t.catalog, t.ident, t.metadata, accessModeOf(req), true);
  };
  const one = async (req: FastifyRequest, reply: import('fastify').FastifyReply): Promise<unknown> => {
    const credentials = await loadCredentials(req, entityOf(req));
    reply.header('cache-control', 'no-store');
    return sendJson(reply, 200, { 'storage-credentials': credentials.map(storageCredentialToJson) });
  };
  app.get(`${TABLE}/credentials`, one);
  app.post(`${TABLE}/sign`, async (req, reply) => {
    const request = parseSignRequest(req.body as JsonValue | undefined);
    const ctx = catalogContext(req);
    const t = await state.catalog.loadTable(ctx, prefixOf(req), entityOf(req));
    const catalog = t.catalog ?? await requireCatalog(state.store, ctx, prefixOf(req));
    const profile = catalog.storageProfile;
    if (profile === null) throw badRequest(`Catalog ${prefixOf(req)} stores its tables locally: there is nothing to sign`);
    const prefixes = tableLocations(catalog, profile, t.metadata).map(s3PrefixOf);
    const target = { endpoint: profile.endpoint, region: profile.region };
    try {
      authorizeSign(request, target, prefixes, accessModeOf(req));
    } catch (e) {
      if (e instanceof SignRefusedError) throw new CatalogError('ForbiddenException', e.message);
      throw e;
    }
    const credentials = vending.ownCredentials(catalog, profile);
    if (credentials === undefined) throw badRequest(`Catalog ${prefixOf(req)} takes its keys from the default provider chain: remote signing needs access-key or environment credentials`);
    const signed = await signS3Request(request, target, credentials, state.clock.now());
    reply.header('cache-control', ['GET', 'HEAD'].includes(request.method.toUpperCase()) ? 'private' : 'no-cache');
    return sendJson(reply, 200, { uri: signed.uri, headers: Object.fromEntries([...signed.headers].map(([k, v]) => [k, [...v]])), 'expires-at-ms': signed.expiresAtMs });
  });
  app.post(`${TABLE}/credentials`, one);
  app.post('/v1/:prefix/tables/credentials/batch', async (req, reply) => {
    const idents = parseBatch(req.body as JsonValue | undefined);
    const results = await Promise.all(idents.map(async (ident): Promise<JsonObject> => {
      const identifier = { namespace: [...ident.namespace], name: ident.name };
      try {
        const credentials = await loadCredentials(req, ident);
        return { identifier, 'storage-credentials': credentials.map(storageCredentialToJson) };
      } catch (e) {
        const known = toCatalogError(e);
        if (known === undefined) throw e;
        return { identifier, error: { message: known.message, type: known.type, code: known.status } };
      }
    }));
    reply.header('cache-control', 'no-store');
    return sendJson(reply, 200, { results });
  });
}
