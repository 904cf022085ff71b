/**
 * The wire contract of the REST catalog, apart from its implementation: request bodies parsed into
 * the service's typed requests (every wrong shape is a 400 `BadRequestException` naming the field)
 * and results written as the OpenAPI response shapes. JSON is read and written with the int64-safe
 * `parseJson` / `stringifyJson`, so snapshot ids survive the trip.
 */
import { asArray, asObject, field, optionalString, requiredString, stringArray, stringMap } from '../iceberg/json-fields.js';
import type { JsonObject, JsonValue } from '../iceberg/json.js';
import { unboundPartitionSpecFromJson } from '../iceberg/partition-spec.js';
import { schemaFromJson } from '../iceberg/schema.js';
import { sortOrderFromJson } from '../iceberg/sort-order.js';
import { tableMetadataToJson, type TableMetadata } from '../iceberg/table-metadata.js';
import { tableRequirementFromJson, tableUpdateFromJson } from '../iceberg/table-updates.js';
import { viewMetadataToJson, viewRequirementFromJson, viewUpdateFromJson, viewVersionFromJson } from '../iceberg/view-metadata.js';
import type { LocationMapping } from '../../storage-creds/file-io.js';
import { warehouseLocationOf, type StorageProfile, type StorageSecret } from '../../storage-creds/storage-profile.js';
import type { EntityIdent, Namespace } from './context.js';
import { badRequest } from './errors.js';
import { checkS3HttpEndpoint, onlyFields } from './profile-fields.js';
import type { LoadedTable, LoadedView } from './loaded.js';
import type { CreateCatalogRequest, ParsedStorageProfile } from './operations/catalogs/index.js';
import type { TableChange } from './operations/tables/commit.js';
import type { CreateTableRequest, RegisterTableRequest } from './operations/tables/index.js';
import type { CreateViewRequest } from './operations/views/index.js';
import { parseS3VendingConfig, s3VendingConfigToJson } from './vending-wire.js';
import { adlsStorageProfileToJson, parseAdlsStorageProfile } from './adls-wire.js';
import { gcsStorageProfileToJson, parseGcsStorageProfile } from './gcs-wire.js';
import type { Page } from './paging.js';
import type { CatalogRecord } from './store.js';
import type { ViewRequirement, ViewUpdate } from '../iceberg/view-metadata.js';
import type { TableRequirement, TableUpdate } from '../iceberg/table-updates.js';

// ---------------------------------------------------------------------------------------------
// Requests

function body(json: JsonValue | undefined, what: string): JsonObject {
  if (json === undefined) throw badRequest(`Missing request body: expected ${what}`);
  return asObject(json, what);
}

function optionalStringMap(obj: JsonObject, key: string): ReadonlyMap<string, string> | undefined {
  const v = field(obj, key);
  if (v === undefined || v === null) return undefined;
  return stringMap(v, key);
}

function optionalBoolean(obj: JsonObject, key: string, what: string): boolean | undefined {
  const v = field(obj, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw badRequest(`Cannot parse non-boolean '${key}' in ${what}`);
  return v;
}

export function namespaceFromJson(json: JsonValue | undefined, what = 'namespace'): Namespace {
  return stringArray(json, what);
}

export function identifierFromJson(json: JsonValue | undefined, what = 'identifier'): EntityIdent {
  const o = asObject(json, what);
  return { namespace: namespaceFromJson(field(o, 'namespace'), `${what}.namespace`), name: requiredString(o, 'name', what) };
}

export function parseCreateNamespace(json: JsonValue | undefined): { readonly namespace: Namespace; readonly properties: ReadonlyMap<string, string> } {
  const o = body(json, 'CreateNamespaceRequest');
  return { namespace: namespaceFromJson(field(o, 'namespace')), properties: optionalStringMap(o, 'properties') ?? new Map() };
}

export function parseUpdateNamespaceProperties(json: JsonValue | undefined): { readonly removals: readonly string[]; readonly updates: ReadonlyMap<string, string> } {
  const o = body(json, 'UpdateNamespacePropertiesRequest');
  const removals = field(o, 'removals');
  return { removals: removals === undefined || removals === null ? [] : stringArray(removals, 'removals'), updates: optionalStringMap(o, 'updates') ?? new Map() };
}

export function parseCreateTable(json: JsonValue | undefined): CreateTableRequest {
  const o = body(json, 'CreateTableRequest');
  const what = 'CreateTableRequest';
  const location = optionalString(o, 'location', what);
  const spec = field(o, 'partition-spec');
  const order = field(o, 'write-order');
  const stage = optionalBoolean(o, 'stage-create', what);
  const properties = optionalStringMap(o, 'properties');
  if (field(o, 'schema') === undefined) throw badRequest(`Cannot parse missing 'schema' in ${what}`);
  return {
    name: requiredString(o, 'name', what),
    ...(location !== undefined ? { location } : {}),
    schema: schemaFromJson(field(o, 'schema')),
    ...(spec !== undefined && spec !== null ? { partitionSpec: unboundPartitionSpecFromJson(spec) } : {}),
    ...(order !== undefined && order !== null ? { writeOrder: sortOrderFromJson(order) } : {}),
    ...(stage !== undefined ? { stageCreate: stage } : {}),
    ...(properties !== undefined ? { properties } : {}),
  };
}

function requirementsAndUpdates(o: JsonObject, what: string): { readonly requirements: readonly TableRequirement[]; readonly updates: readonly TableUpdate[] } {
  const reqs = field(o, 'requirements');
  return {
    requirements: reqs === undefined || reqs === null ? [] : asArray(reqs, `${what}.requirements`).map(tableRequirementFromJson),
    updates: asArray(field(o, 'updates'), `${what}.updates`).map(tableUpdateFromJson),
  };
}

/** A single-table commit; the identifier in the body, when present, must name the path's table. */
export function parseCommitTable(json: JsonValue | undefined, pathIdent: EntityIdent): TableChange {
  const o = body(json, 'CommitTableRequest');
  const id = field(o, 'identifier');
  if (id !== undefined && id !== null) {
    const bodyIdent = identifierFromJson(id);
    if (bodyIdent.name !== pathIdent.name || bodyIdent.namespace.join('\u001f') !== pathIdent.namespace.join('\u001f')) {
      throw badRequest('Invalid CommitTableRequest: identifier does not match the table in the path');
    }
  }
  return { ident: pathIdent, ...requirementsAndUpdates(o, 'CommitTableRequest') };
}

export function parseCommitTransaction(json: JsonValue | undefined): readonly TableChange[] {
  const o = body(json, 'CommitTransactionRequest');
  return asArray(field(o, 'table-changes'), 'table-changes').map((c, i) => {
    const co = asObject(c, `table-changes[${i}]`);
    const id = field(co, 'identifier');
    if (id === undefined || id === null) throw badRequest(`Invalid table-changes[${i}]: identifier is required in a transaction`);
    return { ident: identifierFromJson(id), ...requirementsAndUpdates(co, `table-changes[${i}]`) };
  });
}

export function parseRename(json: JsonValue | undefined): { readonly source: EntityIdent; readonly destination: EntityIdent } {
  const o = body(json, 'RenameTableRequest');
  return { source: identifierFromJson(field(o, 'source'), 'source'), destination: identifierFromJson(field(o, 'destination'), 'destination') };
}

export function parseRegisterTable(json: JsonValue | undefined): RegisterTableRequest {
  const o = body(json, 'RegisterTableRequest');
  const what = 'RegisterTableRequest';
  const overwrite = optionalBoolean(o, 'overwrite', what);
  return { name: requiredString(o, 'name', what), metadataLocation: requiredString(o, 'metadata-location', what), ...(overwrite !== undefined ? { overwrite } : {}) };
}

export function parseCreateView(json: JsonValue | undefined): CreateViewRequest {
  const o = body(json, 'CreateViewRequest');
  const what = 'CreateViewRequest';
  const location = optionalString(o, 'location', what);
  if (field(o, 'schema') === undefined) throw badRequest(`Cannot parse missing 'schema' in ${what}`);
  return {
    name: requiredString(o, 'name', what),
    ...(location !== undefined ? { location } : {}),
    schema: schemaFromJson(field(o, 'schema')),
    viewVersion: viewVersionFromJson(field(o, 'view-version')),
    properties: optionalStringMap(o, 'properties') ?? new Map(),
  };
}

export function parseCommitView(json: JsonValue | undefined): { readonly requirements: readonly ViewRequirement[]; readonly updates: readonly ViewUpdate[] } {
  const o = body(json, 'CommitViewRequest');
  const reqs = field(o, 'requirements');
  return {
    requirements: reqs === undefined || reqs === null ? [] : asArray(reqs, 'requirements').map(viewRequirementFromJson),
    updates: asArray(field(o, 'updates'), 'updates').map(viewUpdateFromJson),
  };
}

export function parseReportMetrics(json: JsonValue | undefined): { readonly reportType: string; readonly report: JsonObject } {
  const o = body(json, 'ReportMetricsRequest');
  const reportType = requiredString(o, 'report-type', 'ReportMetricsRequest');
  if (reportType !== 'scan-report' && reportType !== 'commit-report') throw badRequest(`Invalid report-type: ${reportType}`);
  return { reportType, report: o };
}

/**
 * `storage-profile` of a catalog creation (docs/storage.md): `{type: "s3", bucket, key-prefix?,
 * region, endpoint?, path-style-access?, credentials: {type: access-key | environment |
 * default-chain, …}}`. Messages name fields, never values (a value may be a secret).
 */
export function parseStorageProfile(json: JsonValue): ParsedStorageProfile {
  const what = 'storage-profile';
  const o = asObject(json, what);
  const type = requiredString(o, 'type', what);
  if (type === 'adls') return parseAdlsStorageProfile(o);
  if (type === 'gcs') return parseGcsStorageProfile(o);
  if (type !== 's3') throw badRequest(`Unsupported storage-profile type ${JSON.stringify(type)}: expected "s3", "adls" or "gcs"`);
  onlyFields(o, ['type', 'bucket', 'key-prefix', 'region', 'endpoint', 'path-style-access', 'credentials', 'vended-credentials', 'role-arn', 'external-id', 'sts-endpoint'], what);
  const bucket = requiredString(o, 'bucket', what);
  // S3's bucket naming rules (RGW enforces the same): 3-63 of a-z, 0-9, '.', '-'.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw badRequest(`Invalid bucket name ${JSON.stringify(bucket)} in storage-profile: 3-63 lowercase letters, digits, '.' or '-'`);
  const keyPrefix = (optionalString(o, 'key-prefix', what) ?? '').replace(/^\/+|\/+$/g, '');
  const region = requiredString(o, 'region', what);
  if (!/^[a-z0-9-]{1,64}$/.test(region)) throw badRequest(`Invalid region ${JSON.stringify(region)} in storage-profile`);
  const endpoint = optionalString(o, 'endpoint', what) ?? null;
  if (endpoint !== null) checkS3HttpEndpoint(endpoint, 'endpoint', what);
  const pathStyleAccess = optionalBoolean(o, 'path-style-access', what) ?? false;
  // The role the server assumes for its own access (s3-assumed-role.ts).
  const roleArn = optionalString(o, 'role-arn', what) ?? null;
  const externalId = optionalString(o, 'external-id', what) ?? null;
  const stsEndpoint = optionalString(o, 'sts-endpoint', what) ?? null;
  if (roleArn !== null && !/^arn:[a-z0-9-]*:iam::[0-9]*:role\/[\w+=,.@/-]{1,512}$/.test(roleArn)) throw badRequest('Invalid role-arn in storage-profile: expected arn:aws:iam::<account>:role/<name>');
  if (roleArn === null && (externalId !== null || stsEndpoint !== null)) throw badRequest('external-id and sts-endpoint in storage-profile need role-arn');
  if (externalId !== null && !/^[\w+=,.@:/-]{2,1224}$/.test(externalId)) throw badRequest('Invalid external-id in storage-profile');
  if (stsEndpoint !== null) checkS3HttpEndpoint(stsEndpoint, 'sts-endpoint', what);
  const credentialsJson = field(o, 'credentials');
  if (credentialsJson === undefined || credentialsJson === null) throw badRequest('Missing field \'credentials\' in storage-profile');
  const c = asObject(credentialsJson, 'storage-profile credentials');
  const source = requiredString(c, 'type', 'storage-profile credentials');
  let secret: StorageSecret | null = null;
  switch (source) {
    case 'access-key': {
      onlyFields(c, ['type', 'access-key-id', 'secret-access-key', 'session-token'], 'storage-profile credentials');
      const accessKeyId = requiredString(c, 'access-key-id', 'storage-profile credentials');
      const secretAccessKey = requiredString(c, 'secret-access-key', 'storage-profile credentials');
      const sessionToken = optionalString(c, 'session-token', 'storage-profile credentials');
      if (accessKeyId === '' || secretAccessKey === '') throw badRequest('Empty access-key-id or secret-access-key in storage-profile credentials');
      secret = { type: 's3-keys', accessKeyId, secretAccessKey, ...(sessionToken !== undefined ? { sessionToken } : {}) };
      break;
    }
    case 'environment':
    case 'default-chain':
      onlyFields(c, ['type'], 'storage-profile credentials');
      break;
    default:
      throw badRequest(`Unsupported credentials type ${JSON.stringify(source)} in storage-profile: expected access-key, environment or default-chain`);
  }
  const vending = field(o, 'vended-credentials');
  const vendedCredentials = vending === undefined || vending === null ? undefined : parseS3VendingConfig(vending);
  return { profile: { type: 's3', bucket, keyPrefix, region, endpoint, pathStyleAccess, credentialSource: source, ...(vendedCredentials !== undefined ? { vendedCredentials } : {}), ...(roleArn !== null ? { assumeRole: { roleArn, externalId, stsEndpoint } } : {}) }, secret };
}

/** A profile as clients see it: everything but the keys. */
export function storageProfileToJson(p: StorageProfile): JsonObject {
  switch (p.type) {
    case 's3':
      return {
        type: 's3', bucket: p.bucket, 'key-prefix': p.keyPrefix, region: p.region,
        ...(p.endpoint !== null ? { endpoint: p.endpoint } : {}),
        'path-style-access': p.pathStyleAccess,
        credentials: { type: p.credentialSource },
        ...(p.vendedCredentials !== undefined ? { 'vended-credentials': s3VendingConfigToJson(p.vendedCredentials) } : {}),
        ...(p.assumeRole !== undefined ? {
          'role-arn': p.assumeRole.roleArn,
          ...(p.assumeRole.externalId !== null ? { 'external-id': p.assumeRole.externalId } : {}),
          ...(p.assumeRole.stsEndpoint !== null ? { 'sts-endpoint': p.assumeRole.stsEndpoint } : {}),
        } : {}),
      };
    case 'adls':
      return adlsStorageProfileToJson(p);
    case 'gcs':
      return gcsStorageProfileToJson(p);
  }
}

export function parseCreateCatalog(json: JsonValue | undefined): CreateCatalogRequest {
  const o = body(json, 'CreateCatalogRequest');
  const what = 'CreateCatalogRequest';
  const mappingsJson = field(o, 'location-mappings');
  const locationMappings: LocationMapping[] = mappingsJson === undefined || mappingsJson === null ? [] : asArray(mappingsJson, 'location-mappings').map((m, i) => {
    const mo = asObject(m, `location-mappings[${i}]`);
    return { from: requiredString(mo, 'from', `location-mappings[${i}]`), to: requiredString(mo, 'to', `location-mappings[${i}]`) };
  });
  onlyFields(o, ['name', 'warehouse-location', 'properties', 'location-mappings', 'storage-profile'], what);
  const profileJson = field(o, 'storage-profile');
  const storage = profileJson === undefined || profileJson === null ? undefined : parseStorageProfile(profileJson);
  // With a profile the warehouse may be left out: it is the profile's bucket and prefix.
  const warehouseLocation = storage === undefined ? requiredString(o, 'warehouse-location', what) : optionalString(o, 'warehouse-location', what) ?? warehouseLocationOf(storage.profile);
  return {
    name: requiredString(o, 'name', what),
    warehouseLocation,
    ...(storage !== undefined ? { storage } : {}),
    properties: optionalStringMap(o, 'properties') ?? new Map(),
    locationMappings,
  };
}

// ---------------------------------------------------------------------------------------------
// Responses

export function mapToJson(map: ReadonlyMap<string, string>): JsonObject {
  const out: Record<string, JsonValue> = {};
  for (const [k, v] of map) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

export function catalogToJson(c: CatalogRecord): JsonObject {
  return {
    name: c.name,
    'warehouse-location': c.warehouseLocation,
    properties: mapToJson(c.properties),
    'location-mappings': c.locationMappings.map((m) => ({ from: m.from, to: m.to })),
    ...(c.storageProfile !== null ? { 'storage-profile': storageProfileToJson(c.storageProfile) } : {}),
    'created-at': c.createdAt.toISOString(),
  };
}

/** Which snapshots a table load returns (`snapshots=all|refs`). */
export type SnapshotsMode = 'all' | 'refs';

/** With `refs`, only the snapshots that a branch or tag points at (Java's `REFS` loading mode). */
export function metadataForMode(m: TableMetadata, mode: SnapshotsMode): TableMetadata {
  if (mode === 'all') return m;
  const referenced = new Set([...m.refs.values()].map((r) => r.snapshotId));
  if (m.currentSnapshotId !== null) referenced.add(m.currentSnapshotId);
  return { ...m, snapshots: m.snapshots.filter((s) => referenced.has(s.snapshotId)) };
}

export function loadTableResultToJson(t: LoadedTable, mode: SnapshotsMode = 'all'): JsonObject {
  return {
    ...(t.metadataLocation !== undefined ? { 'metadata-location': t.metadataLocation } : {}),
    metadata: tableMetadataToJson(metadataForMode(t.metadata, mode)),
    config: mapToJson(t.config),
  };
}

export function loadViewResultToJson(v: LoadedView): JsonObject {
  return { 'metadata-location': v.metadataLocation, metadata: viewMetadataToJson(v.metadata), config: mapToJson(v.config) };
}

export function identifiersPageToJson(page: Page<EntityIdent>, paged: boolean): JsonObject {
  return {
    identifiers: page.items.map((i) => ({ namespace: [...i.namespace], name: i.name })),
    ...(page.nextPageToken !== undefined ? { 'next-page-token': page.nextPageToken } : paged ? { 'next-page-token': null } : {}),
  };
}

export function namespacesPageToJson(page: Page<Namespace>, paged: boolean): JsonObject {
  return {
    namespaces: page.items.map((n) => [...n]),
    ...(page.nextPageToken !== undefined ? { 'next-page-token': page.nextPageToken } : paged ? { 'next-page-token': null } : {}),
  };
}

