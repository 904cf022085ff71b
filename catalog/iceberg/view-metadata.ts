/**
 * View metadata (Iceberg view spec, REST `ViewMetadata`): versions with SQL representations, the
 * version log, schemas; create; the view updates and the `assert-view-uuid` requirement, validated as
 * Java's `ViewMetadata.Builder` does.
 */
import { randomUUID } from 'node:crypto';
import { IcebergError, badRequest, unreachable, validationError } from './errors.js';
import { asArray, asObject, field, optionalString, requiredInt, requiredString, stringArray, stringMap } from './json-fields.js';
import { parseJson, stringifyJson } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import { sameSchema, schemaFromJson, schemaToJson, validateUniqueFieldIds } from './schema.js';
import type { Schema } from './schema.js';

/** A query text of the view in one SQL dialect. Other representation types are kept as JSON. */
export type ViewRepresentation =
  | { readonly type: 'sql'; readonly sql: string; readonly dialect: string }
  | { readonly type: 'unknown'; readonly json: JsonObject };

export interface ViewVersion {
  readonly versionId: number;
  readonly timestampMs: number;
  /** Schema of the view's result; `-1` in an `add-view-version` means the schema added last. */
  readonly schemaId: number;
  readonly summary: ReadonlyMap<string, string>;
  readonly representations: readonly ViewRepresentation[];
  readonly defaultCatalog?: string;
  /** Namespace for unqualified identifiers in the SQL. */
  readonly defaultNamespace: readonly string[];
}

export interface ViewHistoryEntry {
  readonly versionId: number;
  readonly timestampMs: number;
}

export interface ViewMetadata {
  readonly viewUuid: string;
  readonly formatVersion: 1;
  readonly location: string;
  readonly currentVersionId: number;
  readonly versions: readonly ViewVersion[];
  readonly versionLog: readonly ViewHistoryEntry[];
  readonly schemas: readonly Schema[];
  readonly properties: ReadonlyMap<string, string>;
}

/** View property: how many versions to keep (Java default 10). */
export const VIEW_VERSION_HISTORY_SIZE_PROPERTY = 'version.history.num-entries';
export const VIEW_VERSION_HISTORY_SIZE_DEFAULT = 10;

export type ViewRequirement = { readonly type: 'assert-view-uuid'; readonly uuid: string };

export type ViewUpdate =
  | { readonly action: 'assign-uuid'; readonly uuid: string }
  | { readonly action: 'upgrade-format-version'; readonly formatVersion: number }
  | { readonly action: 'add-schema'; readonly schema: Schema; readonly lastColumnId?: number }
  | { readonly action: 'set-location'; readonly location: string }
  | { readonly action: 'set-properties'; readonly updates: ReadonlyMap<string, string> }
  | { readonly action: 'remove-properties'; readonly removals: readonly string[] }
  | { readonly action: 'add-view-version'; readonly viewVersion: ViewVersion }
  /** `-1` = the version added last in this commit. */
  | { readonly action: 'set-current-view-version'; readonly viewVersionId: number };

// ---------------------------------------------------------------------------------------------
// JSON

function representationFromJson(json: JsonValue): ViewRepresentation {
  const o = asObject(json, 'view representation');
  const type = requiredString(o, 'type', 'view representation');
  if (type.toLowerCase() !== 'sql') return { type: 'unknown', json: o };
  return { type: 'sql', sql: requiredString(o, 'sql', 'view representation'), dialect: requiredString(o, 'dialect', 'view representation') };
}

function representationToJson(r: ViewRepresentation): JsonValue {
  switch (r.type) {
    case 'sql':
      return { type: 'sql', sql: r.sql, dialect: r.dialect };
    case 'unknown':
      return r.json;
    default:
      return unreachable(r);
  }
}

export function viewVersionFromJson(json: JsonValue | undefined): ViewVersion {
  const o = asObject(json, 'view version');
  const what = 'view version';
  const defaultCatalog = optionalString(o, 'default-catalog', what);
  return {
    versionId: requiredInt(o, 'version-id', what),
    timestampMs: requiredInt(o, 'timestamp-ms', what),
    schemaId: requiredInt(o, 'schema-id', what),
    summary: stringMap(field(o, 'summary'), 'view version summary'),
    representations: asArray(field(o, 'representations'), 'representations').map(representationFromJson),
    ...(defaultCatalog !== undefined ? { defaultCatalog } : {}),
    defaultNamespace: stringArray(field(o, 'default-namespace'), 'default-namespace'),
  };
}

export function viewVersionToJson(v: ViewVersion): JsonObject {
  const out: Record<string, JsonValue> = { 'version-id': v.versionId, 'timestamp-ms': v.timestampMs, 'schema-id': v.schemaId, summary: mapToObject(v.summary) };
  if (v.defaultCatalog !== undefined) out['default-catalog'] = v.defaultCatalog;
  out['default-namespace'] = [...v.defaultNamespace];
  out['representations'] = v.representations.map(representationToJson);
  return out;
}

function mapToObject(map: ReadonlyMap<string, string>): JsonObject {
  const out: Record<string, JsonValue> = {};
  for (const [k, v] of map) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

export function viewMetadataFromJson(json: JsonValue): ViewMetadata {
  const o = asObject(json, 'view metadata');
  const what = 'view metadata';
  const formatVersion = requiredInt(o, 'format-version', what);
  if (formatVersion !== 1) throw new IcebergError('UnsupportedOperationException', `Cannot read unsupported view version ${formatVersion}`);
  return {
    viewUuid: requiredString(o, 'view-uuid', what),
    formatVersion: 1,
    location: requiredString(o, 'location', what),
    currentVersionId: requiredInt(o, 'current-version-id', what),
    versions: asArray(field(o, 'versions'), 'versions').map(viewVersionFromJson),
    versionLog: asArray(field(o, 'version-log'), 'version-log').map((e) => {
      const eo = asObject(e, 'version-log entry');
      return { versionId: requiredInt(eo, 'version-id', 'version-log entry'), timestampMs: requiredInt(eo, 'timestamp-ms', 'version-log entry') };
    }),
    schemas: asArray(field(o, 'schemas'), 'schemas').map((s) => schemaFromJson(s)),
    properties: stringMap(field(o, 'properties'), 'properties'),
  };
}

/** View metadata JSON in Java's `ViewMetadataParser` key order. */
export function viewMetadataToJson(m: ViewMetadata): JsonObject {
  const out: Record<string, JsonValue> = { 'view-uuid': m.viewUuid, 'format-version': m.formatVersion, location: m.location };
  if (m.properties.size > 0) out['properties'] = mapToObject(m.properties);
  out['schemas'] = m.schemas.map(schemaToJson);
  out['current-version-id'] = m.currentVersionId;
  out['versions'] = m.versions.map(viewVersionToJson);
  out['version-log'] = m.versionLog.map((e) => ({ 'version-id': e.versionId, 'timestamp-ms': e.timestampMs }));
  return out;
}

export function parseViewMetadata(text: string): ViewMetadata {
  try {
    return viewMetadataFromJson(parseJson(text));
  } catch (e) {
    if (e instanceof IcebergError) throw e;
    throw badRequest(`Cannot parse view metadata: ${(e as Error).message}`);
  }
}

export function serializeViewMetadata(m: ViewMetadata): string {
  return stringifyJson(viewMetadataToJson(m), { pretty: true });
}

export function viewRequirementFromJson(json: JsonValue): ViewRequirement {
  const o = asObject(json, 'view requirement');
  const type = requiredString(o, 'type', 'view requirement');
  if (type !== 'assert-view-uuid') throw badRequest(`Cannot parse unknown view requirement type: ${type}`);
  return { type, uuid: requiredString(o, 'uuid', type) };
}

export function viewUpdateFromJson(json: JsonValue): ViewUpdate {
  const o = asObject(json, 'view update');
  const action = requiredString(o, 'action', 'view update');
  switch (action) {
    case 'assign-uuid':
      return { action, uuid: requiredString(o, 'uuid', action) };
    case 'upgrade-format-version':
      return { action, formatVersion: requiredInt(o, 'format-version', action) };
    case 'add-schema': {
      const last = field(o, 'last-column-id');
      return { action, schema: schemaFromJson(field(o, 'schema')), ...(typeof last === 'number' ? { lastColumnId: last } : {}) };
    }
    case 'set-location':
      return { action, location: requiredString(o, 'location', action) };
    case 'set-properties':
      asObject(field(o, 'updates'), 'updates');
      return { action, updates: stringMap(field(o, 'updates'), 'updates') };
    case 'remove-properties':
      return { action, removals: stringArray(field(o, 'removals'), 'removals') };
    case 'add-view-version':
      return { action, viewVersion: viewVersionFromJson(field(o, 'view-version')) };
    case 'set-current-view-version':
      return { action, viewVersionId: requiredInt(o, 'view-version-id', action) };
    default:
      throw badRequest(`Cannot parse unknown view update action: ${action}`);
  }
}

export function viewUpdateToJson(u: ViewUpdate): JsonObject {
  switch (u.action) {
    case 'assign-uuid':
      return { action: u.action, uuid: u.uuid };
    case 'upgrade-format-version':
      return { action: u.action, 'format-version': u.formatVersion };
    case 'add-schema':
      return { action: u.action, schema: schemaToJson(u.schema), ...(u.lastColumnId !== undefined ? { 'last-column-id': u.lastColumnId } : {}) };
    case 'set-location':
      return { action: u.action, location: u.location };
    case 'set-properties':
      return { action: u.action, updates: mapToObject(u.updates) };
    case 'remove-properties':
      return { action: u.action, removals: [...u.removals] };
    case 'add-view-version':
      return { action: u.action, 'view-version': viewVersionToJson(u.viewVersion) };
    case 'set-current-view-version':
      return { action: u.action, 'view-version-id': u.viewVersionId };
    default:
      return unreachable(u);
  }
}

// ---------------------------------------------------------------------------------------------
// Commit core

/** Failures of `assert-view-uuid` (Java message); empty = OK. */
export function checkViewRequirements(current: ViewMetadata, requirements: readonly ViewRequirement[]): readonly string[] {
  return requirements
    .filter((r) => r.uuid.toLowerCase() !== current.viewUuid.toLowerCase())
    .map((r) => `Requirement failed: view UUID does not match: expected ${current.viewUuid} != ${r.uuid}`);
}

export interface NewViewInput {
  readonly schema: Schema;
  /** The first version; its `schemaId` is replaced by the stored schema's id. */
  readonly viewVersion: Omit<ViewVersion, 'versionId' | 'schemaId'> & { readonly versionId?: number; readonly schemaId?: number };
  readonly location: string;
  readonly properties?: ReadonlyMap<string, string>;
  readonly viewUuid?: string;
}

/** Metadata of a new view: schema id 0, version id 1, one version-log entry. */
export function newViewMetadata(input: NewViewInput): ViewMetadata {
  const version: ViewVersion = { ...input.viewVersion, versionId: input.viewVersion.versionId ?? 1, schemaId: -1 };
  return applyViewUpdates(undefined, [
    { action: 'assign-uuid', uuid: input.viewUuid ?? randomUUID() },
    { action: 'set-location', location: input.location },
    { action: 'add-schema', schema: input.schema },
    { action: 'set-properties', updates: input.properties ?? new Map() },
    { action: 'add-view-version', viewVersion: version },
    { action: 'set-current-view-version', viewVersionId: -1 },
  ]);
}

/** Same query, schema, catalog and namespace (Java `sameViewVersion`: id, time and summary ignored). */
function sameViewVersion(a: ViewVersion, b: ViewVersion): boolean {
  return (
    a.schemaId === b.schemaId &&
    a.defaultCatalog === b.defaultCatalog &&
    JSON.stringify(a.defaultNamespace) === JSON.stringify(b.defaultNamespace) &&
    JSON.stringify(a.representations) === JSON.stringify(b.representations)
  );
}

/**
 * Applies view updates (`undefined` base = create). Java rules: identical schemas and versions reuse
 * ids, `-1` means added last, a version may not reference an unknown schema or repeat a dialect, and
 * only the `version.history.num-entries` most recent versions (plus the current one) are kept.
 */
export function applyViewUpdates(base: ViewMetadata | undefined, updates: readonly ViewUpdate[]): ViewMetadata {
  let uuid = base?.viewUuid;
  let location = base?.location;
  const schemas = [...(base?.schemas ?? [])];
  const properties = new Map(base?.properties ?? []);
  let versions = [...(base?.versions ?? [])];
  let versionLog = [...(base?.versionLog ?? [])];
  let currentVersionId = base?.currentVersionId ?? -1;
  let lastAddedSchemaId: number | undefined;
  let lastAddedVersionId: number | undefined;
  let changed = false;
  for (const u of updates) {
    switch (u.action) {
      case 'assign-uuid':
        if (base !== undefined && u.uuid.toLowerCase() !== base.viewUuid.toLowerCase()) throw validationError('Cannot reassign view UUID');
        if (uuid === u.uuid) continue;
        uuid = u.uuid;
        break;
      case 'upgrade-format-version':
        if (u.formatVersion !== 1) throw validationError(`Cannot upgrade view to unsupported format version: v${u.formatVersion} (supported: v1)`);
        continue;
      case 'add-schema': {
        validateUniqueFieldIds(u.schema);
        const existing = schemas.find((s) => sameSchema(s, u.schema));
        if (existing !== undefined) {
          lastAddedSchemaId = existing.schemaId;
          continue;
        }
        const id = schemas.reduce((m, s) => Math.max(m, s.schemaId + 1), 0);
        schemas.push({ ...u.schema, schemaId: id });
        lastAddedSchemaId = id;
        break;
      }
      case 'set-location':
        if (u.location === '') throw validationError('Invalid location: empty');
        if (u.location === location) continue;
        location = u.location;
        break;
      case 'set-properties':
        if (u.updates.size === 0) continue;
        for (const [k, v] of u.updates) properties.set(k, v);
        break;
      case 'remove-properties':
        if (u.removals.length === 0) continue;
        for (const k of u.removals) properties.delete(k);
        break;
      case 'add-view-version': {
        let schemaId = u.viewVersion.schemaId;
        if (schemaId === -1) {
          if (lastAddedSchemaId === undefined) throw validationError('Cannot set last added schema: no schema has been added');
          schemaId = lastAddedSchemaId;
        }
        if (!schemas.some((s) => s.schemaId === schemaId)) throw validationError(`Cannot add version with unknown schema: ${schemaId}`);
        const dialects = new Set<string>();
        for (const r of u.viewVersion.representations) {
          if (r.type !== 'sql') continue;
          const d = r.dialect.toLowerCase();
          if (dialects.has(d)) throw validationError(`Invalid view version: Cannot add multiple queries for dialect ${d}`);
          dialects.add(d);
        }
        const version: ViewVersion = { ...u.viewVersion, schemaId };
        const existing = versions.find((v) => sameViewVersion(v, version));
        if (existing !== undefined) {
          lastAddedVersionId = existing.versionId;
          continue;
        }
        // Java's reuseOrCreateNewViewVersionId: the proposed id unless an existing id is >= it.
        let id = Math.max(1, version.versionId);
        for (const v of versions) if (v.versionId >= id) id = v.versionId + 1;
        versions.push({ ...version, versionId: id });
        lastAddedVersionId = id;
        break;
      }
      case 'set-current-view-version': {
        const id = u.viewVersionId === -1 ? lastAddedVersionId : u.viewVersionId;
        if (id === undefined) throw validationError('Cannot set last version: no views have been added');
        const version = versions.find((v) => v.versionId === id);
        if (version === undefined) throw validationError(`Cannot set current version to unknown version: ${id}`);
        if (id === currentVersionId) continue;
        currentVersionId = id;
        versionLog.push({ versionId: id, timestampMs: version.timestampMs });
        break;
      }
      default:
        unreachable(u);
    }
    changed = true;
  }
  if (!changed && base !== undefined) return base;
  if (uuid === undefined) uuid = randomUUID();
  if (location === undefined) throw validationError('Invalid view metadata: location is required');
  if (versions.length === 0 || currentVersionId === -1) throw validationError('Invalid view metadata: a view needs a current version');
  // Keep the most recent versions (by id) plus the current one, and the log entries that still resolve.
  const rawKeep = Number.parseInt(properties.get(VIEW_VERSION_HISTORY_SIZE_PROPERTY) ?? '', 10);
  const keep = Math.max(1, Number.isFinite(rawKeep) ? rawKeep : VIEW_VERSION_HISTORY_SIZE_DEFAULT);
  if (versions.length > keep) {
    const newest = [...versions].sort((a, b) => b.versionId - a.versionId).slice(0, keep).map((v) => v.versionId);
    const retained = new Set([...newest, currentVersionId]);
    versions = versions.filter((v) => retained.has(v.versionId));
    let log: ViewHistoryEntry[] = [];
    for (const e of versionLog) {
      if (retained.has(e.versionId)) log.push(e);
      else log = [];
    }
    versionLog = log;
  }
  return { viewUuid: uuid, formatVersion: 1, location, currentVersionId, versions, versionLog, schemas, properties };
}

/** The current version of a view. */
export function currentViewVersion(m: ViewMetadata): ViewVersion {
  const v = m.versions.find((x) => x.versionId === m.currentVersionId);
  if (v === undefined) throw new Error(`Bug: current view version ${m.currentVersionId} missing`);
  return v;
}
