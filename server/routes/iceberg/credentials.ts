/**
 * Credential vending on the Iceberg routes (docs/vending.md): what a load, create or register adds
 * when the client asks with `X-Iceberg-Access-Delegation: vended-credentials`, and the
 * `/credentials` endpoints. The minting itself is each store's `storage-creds/*-vending.ts`, behind
 * `TableCredentialVendor` (table-vendor.ts); this file decides which locations a table may be given
 * access to (only inside its catalog's warehouse), in which mode (by the token's scopes), and keeps
 * one vendor (its STS client and session cache) per catalog.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { asArray, asObject, field, requiredString } from '../../../catalog/iceberg/json-fields.js';
import type { JsonObject, JsonValue } from '../../../catalog/iceberg/json.js';
import { LOCATION_PROPERTIES, type TableMetadata } from '../../../catalog/iceberg/table-metadata.js';
import type { CatalogContext, EntityIdent } from '../../../catalog/rest/context.js';
import { NAMESPACE_SEPARATOR } from '../../../catalog/rest/context.js';
import { storageSecretPurpose } from '../../../catalog/rest/deps.js';
import { unreachable } from '../../../catalog/iceberg/errors.js';
import { badRequest, CatalogError, toCatalogError } from '../../../catalog/rest/errors.js';
import type { LoadedTable } from '../../../catalog/rest/loaded.js';
import { requireCatalog } from '../../../catalog/rest/resolve.js';
import type { CatalogRecord } from '../../../catalog/rest/store.js';
import { remapLocation } from '../../../storage-creds/file-io.js';
import { isS3Location, parseS3Location } from '../../../storage-creds/s3-file-io.js';
import { adlsHostServed, isAdlsLocation, parseAdlsLocation } from '../../../storage-creds/adls-file-io.js';
import { adlsSasKeySource, adlsTableVendor } from '../../../storage-creds/adls-vending.js';
import { isGcsLocation, parseGcsLocation } from '../../../storage-creds/gcs-file-io.js';
import { gcsAuthClient, sourceTokenOf } from '../../../storage-creds/gcs-auth.js';
import { gcsTableVendor } from '../../../storage-creds/gcs-vending.js';
import { S3RequestSigner, SignRefusedError, authorizeSign, signTargetOf, type SignTarget } from '../../../storage-creds/s3-signing.js';
import { s3PrefixOf, s3TableVendor, type AccessMode, type S3Prefix } from '../../../storage-creds/s3-vending.js';
import {
  adlsBlobEndpointOf, clientPropertiesOf, gcsCredentials, s3Credentials, type S3StorageProfile, type StorageProfile, type StorageSecret,
} from '../../../storage-creds/storage-profile.js';
import type { TableCredentialVendor } from '../../../storage-creds/table-vendor.js';
import type { RemoteSignRequest } from '../../../storage-creds/s3-signing.js';
import type { FloeState } from '../../state.js';
import { DelegationRecorder, outcomeOfStatus, type DelegationRecord } from './delegation-record.js';
import { catalogContext, entityOf, prefixOf, sendJson } from './http.js';

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

/**
 * The key (path) of `location` inside the profile's bucket or filesystem, or undefined when the
 * profile's store does not hold it (another scheme, bucket, account or filesystem).
 */
function keyInProfile(profile: StorageProfile, location: string): string | undefined {
  switch (profile.type) {
    case 's3':
      return isS3Location(location) && parseS3Location(location).bucket === profile.bucket ? parseS3Location(location).key : undefined;
    case 'gcs':
      return isGcsLocation(location) && parseGcsLocation(location).bucket === profile.bucket ? parseGcsLocation(location).name : undefined;
    case 'adls': {
      if (!isAdlsLocation(location)) return undefined;
      const l = parseAdlsLocation(location);
      // The host too, not only the account: the entry's prefix is the location, and a client sends
      // the SAS to the host it names.
      return adlsHostServed(l, profile.accountName, profile.endpointSuffix) && l.container === profile.filesystem ? l.path : undefined;
    }
  }
}

/** Whether key `key` is `base` or below it (path-segment boundary). */
function keyWithin(key: string, base: string): boolean {
  const b = base.replace(/\/+$/, '');
  if (b === '') return true;
  const k = key.replace(/\/+$/, '');
  return k === b || k.startsWith(`${b}/`);
}

/**
 * The table's storage locations (its location, then any location properties elsewhere), each
 * checked to lie inside the catalog's warehouse. Anything else gets no credential: 403 naming it.
 */
export function tableLocations(catalog: CatalogRecord, profile: StorageProfile, metadata: TableMetadata): readonly string[] {
  const found: { what: string; location: string }[] = [{ what: 'location', location: metadata.location }];
  for (const p of LOCATION_PROPERTIES) {
    const v = metadata.properties.get(p);
    if (v !== undefined && v !== '') found.push({ what: p, location: v });
  }
  const warehouseKey = keyInProfile(profile, catalog.warehouseLocation);
  const out: { location: string; key: string }[] = [];
  for (const { what, location } of found) {
    const key = keyInProfile(profile, location);
    // A key with `.` or `..` segments names another place to any client that normalizes paths.
    const ok = key !== undefined && warehouseKey !== undefined && !key.split('/').some((seg) => seg === '..' || seg === '.') && keyWithin(key, warehouseKey);
    if (!ok) throw new CatalogError('ForbiddenException', `No storage credentials: the table's ${what} ${location} is outside the catalog's warehouse ${catalog.warehouseLocation}`);
    // A catalog's location mapping moves where the files really are: that place must be inside too.
    const mapped = remapLocation(location, catalog.locationMappings);
    if (mapped !== location) {
      const mappedKey = keyInProfile(profile, mapped);
      if (mappedKey === undefined || warehouseKey === undefined || mappedKey.split('/').some((seg) => seg === '..' || seg === '.') || !keyWithin(mappedKey, warehouseKey)) {
        throw new CatalogError('ForbiddenException', `No storage credentials: the table's ${what} ${location} is mapped to ${mapped}, outside the catalog's warehouse ${catalog.warehouseLocation}`);
      }
    }
    // A location inside one already covered needs no entry of its own.
    if (!out.some((o) => keyWithin(key, o.key))) out.push({ location: location.replace(/\/+$/, ''), key });
  }
  return out.map((o) => o.location);
}

/** `v1/{prefix}/namespaces/{ns}/tables/{table}/credentials`, relative to the catalog URI as clients resolve it. */
export function refreshEndpointOf(catalogName: string, ident: EntityIdent): string {
  return `${tablePathOf(catalogName, ident)}/credentials`;
}

/** `v1/{prefix}/namespaces/{ns}/tables/{table}`, encoded as clients encode it. */
export function tablePathOf(catalogName: string, ident: EntityIdent): string {
  const enc = (s: string): string => encodeURIComponent(s);
  return `v1/${enc(catalogName)}/namespaces/${enc(ident.namespace.join(NAMESPACE_SEPARATOR))}/tables/${enc(ident.name)}`;
}

/**
 * Whether Floe can vend credentials for tables of a catalog on this store (the `credentials`
 * endpoints are advertised only then).
 */
export function vendingSupported(profile: StorageProfile): boolean {
  switch (profile.type) {
    case 's3':
      return profile.vendedCredentials !== undefined;
    case 'adls':
      return profile.vendedCredentials !== undefined && profile.hierarchicalNamespace;
    case 'gcs':
      return profile.vendedCredentials !== undefined;
  }
}

/**
 * Whether Floe can sign requests to this store: S3 with keys of its own (a default-chain profile
 * has none Floe could sign with).
 */
export function signingSupported(profile: StorageProfile): boolean {
  return profile.type === 's3' && profile.credentialSource !== 'default-chain';
}

/** What signing needs to know of a table: where its files are, and how to sign for its store. */
interface SignTable {
  readonly catalog: CatalogRecord;
  readonly prefixes: readonly S3Prefix[];
  readonly tableUuid: string;
  readonly target: SignTarget;
}

/**
 * How long a table's locations are reused by signing, from the moment the store read that gave
 * them started. A client signs once per object request, so a table scan asks hundreds of times a
 * second about the same table; one store read per second per table is enough (a dropped table or
 * a moved location is seen within this long, well inside the 15 minutes any signature Floe
 * already gave stays valid).
 */
const SIGN_TABLE_TTL_MS = 1000;
/**
 * From this age on, a request still uses the entry and starts one read behind it, so that under
 * steady signing the entry is renewed before it expires and no request waits for the store (when
 * all waited, once a second, that wait was the signing p99).
 */
const SIGN_TABLE_REFRESH_MS = 500;
const SIGN_TABLE_CACHE_MAX = 10_000;

interface SignTableEntry {
  /** When the read that gave `table` started. */
  readonly at: number;
  readonly table: Promise<SignTable>;
  /** A read to renew this entry is under way. */
  renewing: boolean;
}

/** Vendors by catalog id, for one server (profiles never change, so neither does a vendor). */
export class CredentialVending {
  private readonly vendors = new Map<string, TableCredentialVendor>();
  private readonly signTables = new Map<string, SignTableEntry>();
  private readonly signers = new Map<string, S3RequestSigner | undefined>();
  /** Counts and audits every vend and signature (delegation-record.ts). */
  readonly recorder: DelegationRecorder;
  /**
   * Load bodies with an entry list spliced in, by the list (a session's entries are made once and
   * handed out again and again): the last body each list went into and the text it made.
   */
  private readonly splicedBodies = new WeakMap<readonly StorageCredential[], { readonly body: string; readonly text: string }>();

  constructor(private readonly state: FloeState, onAuditWriteError: (e: unknown) => void = () => undefined) {
    this.recorder = new DelegationRecorder(state.store, state.metrics.registry, onAuditWriteError);
  }

  /** The catalog's own S3 keys (undefined: the SDK's default chain). */
  ownCredentials(catalog: CatalogRecord, profile: S3StorageProfile): ReturnType<typeof s3Credentials> {
    return s3Credentials(profile, this.secretOf(catalog));
  }

  private secretOf(catalog: CatalogRecord): StorageSecret | null {
    if (catalog.storageSecretSealed === null) return null;
    const box = this.state.catalog.deps.secrets;
    if (box === undefined) throw new Error('catalog storage secrets cannot be opened: no server key');
    return JSON.parse(box.open(catalog.storageSecretSealed, storageSecretPurpose(catalog.id))) as StorageSecret;
  }

  /** The catalog's vendor, made on first use and kept (profiles never change); undefined when it vends nothing. */
  private vendorOf(catalog: CatalogRecord, profile: StorageProfile): TableCredentialVendor | undefined {
    const known = this.vendors.get(catalog.id);
    if (known !== undefined) return known;
    const vendor = this.newVendor(catalog, profile);
    if (vendor !== undefined) this.vendors.set(catalog.id, vendor);
    return vendor;
  }

  /**
   * A vendor for the profile's store, started from the server's own credentials, or undefined when
   * the profile has no vended-credentials (vendingSupported). How each store mints is in its
   * `storage-creds/*-vending.ts`.
   */
  private newVendor(catalog: CatalogRecord, profile: StorageProfile): TableCredentialVendor | undefined {
    const options = { now: () => this.state.clock.now(), cacheSessions: this.state.config.storage.vending?.cache_sessions ?? true };
    switch (profile.type) {
      case 's3': {
        const config = profile.vendedCredentials;
        return config === undefined ? undefined : s3TableVendor(profile, config, this.ownCredentials(catalog, profile), options);
      }
      case 'adls': {
        const config = profile.vendedCredentials;
        // Without a hierarchical namespace a SAS cannot be held to a table's directory.
        if (config === undefined || !profile.hierarchicalNamespace) return undefined;
        // Shared key: service SAS tokens. Client credentials: user-delegation SAS tokens, signed with a
        // key the service principal gets from the account and keeps for days.
        return adlsTableVendor(adlsSasKeySource(profile, this.secretOf(catalog), options.now), config, adlsBlobEndpointOf(profile).startsWith('http:'), options);
      }
      case 'gcs': {
        const config = profile.vendedCredentials;
        if (config === undefined) return undefined;
        // The server's own token is the subject of every exchange; its client caches and refreshes it.
        const source = gcsAuthClient(gcsCredentials(profile, this.secretOf(catalog)));
        return gcsTableVendor(profile, config, () => sourceTokenOf(source), options);
      }
      default:
        return unreachable(profile);
    }
  }

  /**
   * Refuses (403) a table one of whose locations is the warehouse root, a namespace's folder, or
   * overlaps another table's or view's location: credentials or signatures for it would reach
   * those other tables' files. Create and commit refuse such locations; this catches tables stored
   * before they did (docs/vending.md).
   */
  private async assertExclusive(catalog: CatalogRecord, ident: EntityIdent, metadata: TableMetadata): Promise<void> {
    const conflict = await this.state.catalog.locationConflict(catalog, ident, metadata);
    if (conflict !== undefined) throw new CatalogError('ForbiddenException', `No storage credentials: ${conflict}`);
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
    await this.assertExclusive(record, ident, metadata);
    try {
      return await vendor.vend(locations, mode, refreshEndpointOf(catalogName, ident));
    } catch (e) {
      if (vendor.isVendingFailure(e)) throw new CatalogError('ServiceUnavailableException', `Could not vend storage credentials: ${e.message}`, { cause: e });
      throw e;
    }
  }

  /**
   * A LoadTableResult text `body` with `credentials` as its `storage-credentials`, spliced in before
   * its closing brace: the metadata is not serialized again for a vended load. While a session
   * lasts, every load of the table gets the same text (the body is the response cache's), so it is
   * made once and not rebuilt (and reallocated) per load. The entries hold strings only: the plain
   * serializer writes them.
   */
  withCredentials(body: string, credentials: readonly StorageCredential[]): string {
    const last = this.splicedBodies.get(credentials);
    if (last !== undefined && last.body === body) return last.text;
    const text = `${body.slice(0, body.lastIndexOf('}'))},"storage-credentials":${JSON.stringify(credentials.map(storageCredentialToJson))}}`;
    this.splicedBodies.set(credentials, { body, text });
    return text;
  }

  /**
   * The same for a loaded table (load, create, register). A token without `table:data` gets none
   * (the load itself still answers: Java clients send the header on every load by default).
   */
  async forLoaded(req: FastifyRequest, ctx: CatalogContext, catalogName: string, t: LoadedTable): Promise<readonly StorageCredential[]> {
    if (req.auth?.scopes.has('table:data') !== true) return [];
    return this.recordedVend(req, catalogName, t.ident, () => t.metadata.tableUuid, 'load', () => this.credentialsFor(ctx, catalogName, t.catalog, t.ident, t.metadata, accessModeOf(req)));
  }

  /**
   * Runs a vend and records it (count and audit row): issued when credentials came back, denied or
   * error by the failure's status. A catalog that needs no credentials (local files) records nothing.
   */
  async recordedVend(req: FastifyRequest, catalogName: string, ident: EntityIdent, tableUuid: () => string | undefined, via: 'load' | 'credentials' | 'batch', vend: () => Promise<readonly StorageCredential[]>): Promise<readonly StorageCredential[]> {
    const base = (): Omit<DelegationRecord, 'outcome' | 'expiresAtMs' | 'details'> => ({ type: 'vend_credentials', ...this.who(req, catalogName, ident, tableUuid()) });
    let credentials: readonly StorageCredential[];
    try {
      credentials = await vend();
    } catch (e) {
      const known = toCatalogError(e);
      this.recorder.record({ ...base(), outcome: outcomeOfStatus(known?.status), expiresAtMs: undefined, details: { via, reason: known?.message ?? 'internal error' } });
      throw e;
    }
    if (credentials.length > 0) {
      // The expiry is the one config key every store's entry has (`…expires-at-ms`); no key is read.
      const expiry = [...(credentials[0]?.config ?? new Map<string, string>())].find(([k]) => k.endsWith('expires-at-ms'))?.[1];
      this.recorder.record({
        ...base(), outcome: 'issued', expiresAtMs: expiry !== undefined ? Number(expiry) : undefined,
        details: { via, prefixes: credentials.map((c) => c.prefix) },
      });
    }
    return credentials;
  }

  /** The audit fields every record of this request shares. */
  who(req: FastifyRequest, catalogName: string, ident: EntityIdent, tableUuid: string | undefined): Omit<DelegationRecord, 'type' | 'outcome' | 'expiresAtMs' | 'details'> {
    const principal = req.auth?.principal;
    return {
      tenantId: principal?.tenantId ?? '', principal: principal !== undefined ? { id: principal.id, name: principal.name } : undefined,
      catalog: catalogName, namespace: ident.namespace, table: ident.name, tableUuid, mode: accessModeOf(req), at: this.state.clock.now(),
    };
  }

  /**
   * The store's client settings for a table's load `config` (region, endpoint, path style: what an
   * engine needs beside the keys); none for a catalog on local storage.
   */
  async storageConfig(ctx: CatalogContext, catalogName: string, t: LoadedTable): Promise<ReadonlyMap<string, string>> {
    const record = t.catalog ?? await requireCatalog(this.state.store, ctx, catalogName);
    return record.storageProfile === null ? new Map() : clientPropertiesOf(record.storageProfile);
  }

  /**
   * The load `config` that turns on remote signing for a table of a catalog whose store Floe can
   * sign for (signingSupported), or undefined.
   *
   * The signer URI is the table's own path (`<base>/v1/<catalog>/namespaces/<ns>/tables/<t>`) and
   * the endpoint `sign`, so every way clients combine them reaches a route that names the table:
   * current clients (`uri` + `/` + `endpoint`) the spec's `…/tables/<t>/sign`; older Java and
   * Python clients, which ignore the endpoint and post to `uri + '/v1/aws/s3/sign'`, the legacy
   * route `…/tables/<t>/v1/aws/s3/sign`. Both the `s3.`-prefixed keys and the storage-neutral
   * `signer.*` ones carry the same values, so a client mixing them still lands on the table.
   * `s3.signer` names PyIceberg's signer (it picks it by that key).
   */
  async signingConfig(req: FastifyRequest, ctx: CatalogContext, catalogName: string, t: LoadedTable): Promise<ReadonlyMap<string, string> | undefined> {
    if (req.auth?.scopes.has('table:data') !== true) return undefined;
    const record = t.catalog ?? await requireCatalog(this.state.store, ctx, catalogName);
    const profile = record.storageProfile;
    if (profile === null || profile.type !== 's3' || !signingSupported(profile)) return undefined;
    tableLocations(record, profile, t.metadata); // refuses a table whose files lie outside the warehouse
    await this.assertExclusive(record, t.ident, t.metadata);
    const signerUri = `${req.protocol}://${req.headers.host ?? 'localhost'}/${tablePathOf(catalogName, t.ident)}`;
    return new Map([
      ['s3.remote-signing-enabled', 'true'],
      ['s3.signer', 'S3V4RestSigner'],
      ['s3.signer.uri', signerUri],
      ['s3.signer.endpoint', 'sign'],
      ['signer.uri', signerUri],
      ['signer.endpoint', 'sign'],
      ...clientPropertiesOf(profile),
    ]);
  }

  /**
   * The table's sign target (its locations, checked inside the warehouse), shared by concurrent
   * requests and reused for SIGN_TABLE_TTL_MS from the start of the read that gave it, renewed
   * behind the requests from SIGN_TABLE_REFRESH_MS on. A failure is not kept, and a renewal that
   * fails (the table was dropped, the store failed) drops the entry: the next request reads anew.
   */
  signTable(ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<SignTable> {
    const key = JSON.stringify([ctx.tenantId, catalogName, ident.namespace, ident.name]);
    const now = Date.now();
    const hit = this.signTables.get(key);
    if (hit !== undefined && now - hit.at < SIGN_TABLE_TTL_MS) {
      if (now - hit.at >= SIGN_TABLE_REFRESH_MS && !hit.renewing) {
        hit.renewing = true;
        const next = this.readSignTable(ctx, catalogName, ident);
        next.then(
          () => { if (this.signTables.get(key) === hit) this.signTables.set(key, { at: now, table: next, renewing: false }); },
          () => { if (this.signTables.get(key) === hit) this.signTables.delete(key); },
        );
      }
      return hit.table;
    }
    const entry: SignTableEntry = { at: now, table: this.readSignTable(ctx, catalogName, ident), renewing: false };
    if (this.signTables.size >= SIGN_TABLE_CACHE_MAX) this.signTables.clear();
    this.signTables.set(key, entry);
    entry.table.catch(() => {
      if (this.signTables.get(key) === entry) this.signTables.delete(key);
    });
    return entry.table;
  }

  private async readSignTable(ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<SignTable> {
    const t = await this.state.catalog.loadTable(ctx, catalogName, ident);
    const catalog = t.catalog ?? await requireCatalog(this.state.store, ctx, catalogName);
    const profile = catalog.storageProfile;
    if (profile === null) throw badRequest(`Catalog ${catalogName} stores its tables locally: there is nothing to sign`);
    if (profile.type !== 's3') throw badRequest(`Catalog ${catalogName} is on ${profile.type} storage: remote signing is for S3 only (use vended credentials)`);
    const prefixes = tableLocations(catalog, profile, t.metadata).map(s3PrefixOf);
    await this.assertExclusive(catalog, t.ident, t.metadata);
    return { catalog, prefixes, tableUuid: t.metadata.tableUuid, target: signTargetOf(profile.endpoint, profile.region) };
  }

  /** The catalog's signer (its own keys), or undefined for a default-chain profile. One per catalog. */
  signerFor(table: SignTable): S3RequestSigner | undefined {
    const { catalog } = table;
    if (this.signers.has(catalog.id)) return this.signers.get(catalog.id);
    const profile = catalog.storageProfile;
    const credentials = profile === null || profile.type !== 's3' ? undefined : this.ownCredentials(catalog, profile);
    const signer = credentials === undefined ? undefined : new S3RequestSigner(table.target, credentials);
    this.signers.set(catalog.id, signer);
    return signer;
  }

  async close(): Promise<void> {
    for (const v of this.vendors.values()) v.close();
    this.vendors.clear();
    await this.recorder.close();
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
  const loadCredentials = async (req: FastifyRequest, ident: EntityIdent, via: 'credentials' | 'batch'): Promise<readonly StorageCredential[]> => {
    let tableUuid: string | undefined;
    return vending.recordedVend(req, prefixOf(req), ident, () => tableUuid, via, async () => {
      const ctx = catalogContext(req);
      const t = await state.catalog.loadTable(ctx, prefixOf(req), ident);
      tableUuid = t.metadata.tableUuid;
      return vending.credentialsFor(ctx, prefixOf(req), t.catalog, t.ident, t.metadata, accessModeOf(req), true);
    });
  };
  const one = async (req: FastifyRequest, reply: import('fastify').FastifyReply): Promise<unknown> => {
    const credentials = await loadCredentials(req, entityOf(req), 'credentials');
    reply.header('cache-control', 'no-store');
    return sendJson(reply, 200, { 'storage-credentials': credentials.map(storageCredentialToJson) });
  };
  app.get(`${TABLE}/credentials`, one);
  const sign = async (req: FastifyRequest, reply: import('fastify').FastifyReply): Promise<unknown> => {
    const ident = entityOf(req);
    const catalogName = prefixOf(req);
    let tableUuid: string | undefined;
    let request: RemoteSignRequest | undefined;
    // What the audit row says about the request: method and the URI without its query (a query may
    // carry anything a client put there), never the headers.
    const what = (): Record<string, string> => (request === undefined ? {} : { method: request.method.toUpperCase(), uri: request.uri.split('?')[0] ?? '' });
    try {
      request = parseSignRequest(req.body as JsonValue | undefined);
      const table = await vending.signTable(catalogContext(req), catalogName, ident);
      tableUuid = table.tableUuid;
      let url: URL;
      try {
        url = authorizeSign(request, table.target, table.prefixes, accessModeOf(req));
      } catch (e) {
        if (e instanceof SignRefusedError) throw new CatalogError('ForbiddenException', e.message);
        throw e;
      }
      const signer = vending.signerFor(table);
      if (signer === undefined) throw badRequest(`Catalog ${catalogName} takes its keys from the default provider chain: remote signing needs access-key or environment credentials`);
      const signed = await signer.sign(request, state.clock.now(), url);
      vending.recorder.record({ type: 'sign_request', outcome: 'issued', ...vending.who(req, catalogName, ident, tableUuid), expiresAtMs: signed.expiresAtMs, details: what() });
      const method = request.method.toUpperCase();
      reply.header('cache-control', method === 'GET' || method === 'HEAD' ? 'private' : 'no-cache');
      // Strings and an epoch-ms number only: the plain serializer (no int64 handling needed) on this hot path.
      return sendJson(reply, 200, JSON.stringify({ uri: signed.uri, headers: Object.fromEntries(signed.headers), 'expires-at-ms': signed.expiresAtMs }));
    } catch (e) {
      const known = toCatalogError(e);
      vending.recorder.record({
        type: 'sign_request', outcome: outcomeOfStatus(known?.status), ...vending.who(req, catalogName, ident, tableUuid), expiresAtMs: undefined,
        details: { ...what(), reason: known?.message ?? 'internal error' },
      });
      throw e;
    }
  };
  app.post(`${TABLE}/sign`, sign);
  // Older Java and Python clients post to `s3.signer.uri + '/v1/aws/s3/sign'`; the signer URI a load
  // hands out is the table's path, so the table is in the URL here too.
  app.post(`${TABLE}/v1/aws/s3/sign`, sign);
  app.post('/v1/aws/s3/sign', async () => {
    throw badRequest('Remote signing needs the table: load it with X-Iceberg-Access-Delegation: remote-signing and sign through the s3.signer.uri it returns (v1/{prefix}/namespaces/{namespace}/tables/{table}/sign)');
  });
  app.post(`${TABLE}/credentials`, one);
  app.post('/v1/:prefix/tables/credentials/batch', async (req, reply) => {
    const idents = parseBatch(req.body as JsonValue | undefined);
    const results = await Promise.all(idents.map(async (ident): Promise<JsonObject> => {
      const identifier = { namespace: [...ident.namespace], name: ident.name };
      try {
        const credentials = await loadCredentials(req, ident, 'batch');
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
