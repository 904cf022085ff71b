/**
 * Reading Iceberg with DuckDB: a planned `TableScanInput` becomes one DuckDB relation (SQL text of a
 * `SELECT`) that yields the table's rows as of the planned snapshot, under the current column names.
 *
 * - Columns are projected by Iceberg field id (`read_parquet(..., schema = MAP {id: {name, type,
 *   default_value}})`): renamed columns keep their data, dropped ones are not read, added ones read as
 *   NULL from older files, widened ones (int→long, float→double, decimal precision) are cast.
 * - Files written without field ids (migrated tables) are read by the table's name mapping
 *   (`schema.name-mapping.default`): each field id maps to the names it had in those files.
 * - v2 position deletes: an anti-join on (data file, row position) with `filename` and
 *   `file_row_number` of `read_parquet`; paths stored in delete files are mapped the same way as
 *   the data file locations before comparison.
 * - v2 equality deletes: an anti-join per delete file on its equality columns (`IS NOT DISTINCT
 *   FROM`: Iceberg's equality treats two nulls as equal). Which delete files apply to which data file
 *   (sequence numbers, partitions) was decided by scan planning; files are grouped by the set of
 *   delete files that apply so each group is one `read_parquet`.
 *
 * Everything here is pure (strings in, SQL out); the executor probes files for field ids when a
 * name mapping exists and passes the answer in.
 */
import { unreachable } from '../../catalog/iceberg/errors.js';
import type { FileScanTask, ScanFile } from '../../catalog/iceberg/scan.js';
import { decimalToString, uuidFromBytes } from '../../catalog/iceberg/conversions.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import type { PartitionSpec } from '../../catalog/iceberg/partition-spec.js';
import type { Schema } from '../../catalog/iceberg/schema.js';
import type { IcebergType, NestedField } from '../../catalog/iceberg/types.js';
import { isPrimitive } from '../../catalog/iceberg/types.js';
import { remapLocation } from '../../storage-creds/file-io.js';
import type { LocationMapping } from '../../storage-creds/file-io.js';
import { resolveLocalPath } from '../../storage-creds/local-file-io.js';
import type { TableScanInput } from '../fragments.js';
import { scanColumnName } from '../fragments.js';
import { isoDate, isoTimestampNanos } from '../exec/values.js';
import { defaultValueSql, defaultedFieldIds } from './defaults.js';
import { floorDiv, formatTime } from '../../catalog/iceberg/datetime.js';

/** Field ids of the position delete file columns (table spec "Position Delete Files"). */
export const POSITION_DELETE_FILE_PATH_ID = 2147483546;
export const POSITION_DELETE_POS_ID = 2147483545;

/** A SQL identifier, double-quoted. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A SQL string literal. */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** The DuckDB type of an Iceberg type. */
export function duckdbType(type: IcebergType): string {
  switch (type.kind) {
    case 'boolean': return 'BOOLEAN';
    case 'int': return 'INTEGER';
    case 'long': return 'BIGINT';
    case 'float': return 'FLOAT';
    case 'double': return 'DOUBLE';
    case 'decimal': return `DECIMAL(${type.precision},${type.scale})`;
    case 'date': return 'DATE';
    case 'time': return 'TIME';
    case 'timestamp': return 'TIMESTAMP';
    case 'timestamptz': return 'TIMESTAMPTZ';
    case 'timestamp_ns': return 'TIMESTAMP_NS';
    case 'timestamptz_ns': return 'TIMESTAMPTZ';
    case 'string': return 'VARCHAR';
    case 'uuid': return 'UUID';
    case 'fixed': case 'binary': case 'geometry': case 'geography': case 'variant': return 'BLOB';
    case 'unknown': return 'INTEGER';
    case 'struct': return `STRUCT(${type.fields.map((f) => `${quoteIdent(f.name)} ${duckdbType(f.type)}`).join(', ')})`;
    case 'list': return `${duckdbType(type.element)}[]`;
    case 'map': return `MAP(${duckdbType(type.key)}, ${duckdbType(type.value)})`;
    default: return unreachable(type);
  }
}

/**
 * Where DuckDB reads a file of a scan: its local copy when it lives on object storage (fetched into
 * the read-through cache before the fragment runs), else the location mapped and made a path.
 */
export function scanFilePath(scan: Pick<TableScanInput, 'localFiles' | 'locationMappings'>, location: string): string {
  return scan.localFiles?.get(location) ?? localPath(location, scan.locationMappings ?? []);
}

/** Where DuckDB reads a location: mapped by `mappings`, then `file:` URIs turned into paths. */
export function localPath(location: string, mappings: readonly LocationMapping[] = []): string {
  return resolveLocalPath(remapLocation(location, mappings));
}

/** The SQL expression that maps a location column the way `localPath` maps a location. */
export function localPathSql(expr: string, mappings: readonly LocationMapping[] = []): string {
  let e = expr;
  // Longest prefix first, as remapLocation does.
  const sorted = [...mappings].sort((a, b) => b.from.length - a.from.length);
  if (sorted.length > 0) {
    const cases = sorted.map((m) => `WHEN starts_with(${e}, ${sqlString(m.from)}) THEN ${sqlString(m.to)} || substr(${e}, ${m.from.length + 1})`).join(' ');
    e = `(CASE ${cases} ELSE ${e} END)`;
  }
  return `regexp_replace(${e}, '^file:(//(localhost)?)?/', '/')`;
}

/** A DuckDB literal of an Iceberg value (as manifests decode them), or `undefined` when not expressible. */
export function icebergLiteral(type: IcebergType, value: IcebergValue | null): string | undefined {
  const t = duckdbType(type);
  if (value === null) return `NULL::${t}`;
  switch (type.kind) {
    case 'boolean': return value === true ? 'true' : 'false';
    case 'int': case 'long': return `CAST(${String(value)} AS ${t})`;
    case 'float': case 'double': return typeof value === 'number' && Number.isFinite(value) ? `CAST(${String(value)} AS ${t})` : `CAST('${String(value)}' AS ${t})`;
    case 'decimal': return typeof value === 'bigint' ? `CAST('${decimalToString(value, type.scale)}' AS ${t})` : undefined;
    case 'string': return typeof value === 'string' ? `CAST(${sqlString(value)} AS VARCHAR)` : undefined;
    case 'date': return typeof value === 'number' ? `DATE '${isoDate(value)}'` : undefined;
    case 'timestamp': return `CAST('${isoTimestampNanos(BigInt(value as number | bigint) * 1000n, false)}' AS TIMESTAMP)`;
    case 'timestamptz': return `CAST('${isoTimestampNanos(BigInt(value as number | bigint) * 1000n, false)}+00' AS TIMESTAMPTZ)`;
    case 'timestamp_ns': return `CAST('${isoTimestampNanos(BigInt(value as number | bigint), false)}' AS TIMESTAMP_NS)`;
    // DuckDB has no zoned nanosecond type: the column reads as TIMESTAMPTZ (micros), so does its value.
    case 'timestamptz_ns': return `CAST('${isoTimestampNanos(floorDiv(BigInt(value as number | bigint), 1000n) * 1000n, false)}+00' AS TIMESTAMPTZ)`;
    case 'time': return typeof value === 'bigint' || typeof value === 'number' ? `CAST('${formatTime(BigInt(value))}' AS TIME)` : undefined;
    case 'uuid': return typeof value === 'string' ? `CAST(${sqlString(value)} AS UUID)` : value instanceof Uint8Array && value.length === 16 ? `CAST(${sqlString(uuidFromBytes(value))} AS UUID)` : undefined;
    case 'fixed': case 'binary': return value instanceof Uint8Array ? blobLiteral(value) : undefined;
    case 'geometry': case 'geography': case 'variant': case 'unknown': case 'struct': case 'list': case 'map': return undefined;
    default: return unreachable(type);
  }
}

/** A DuckDB BLOB literal of bytes (`from_hex` folds to a constant). */
export function blobLiteral(bytes: Uint8Array): string {
  return `CAST(from_hex('${Buffer.from(bytes).toString('hex')}') AS BLOB)`;
}


/**
 * Field id → literal for the identity-partitioned columns of a content file (rule 2 of the spec's
 * column projection: a column absent from a data file takes the identity partition value).
 */
function identityConstants(specs: ReadonlyMap<number, PartitionSpec>, byId: ReadonlyMap<number, NestedField>, file: ScanFile): ReadonlyMap<number, string> {
  const out = new Map<number, string>();
  const spec = specs.get(file.specId);
  if (spec === undefined) return out;
  spec.fields.forEach((pf, i) => {
    if (pf.transform.kind !== 'identity') return;
    const field = byId.get(pf.sourceId);
    if (field === undefined || i >= file.file.partition.length) return;
    const lit = icebergLiteral(field.type, file.file.partition[i] ?? null);
    if (lit !== undefined) out.set(pf.sourceId, lit);
  });
  return out;
}

/** Internal column name of field `id` inside the scan. */
function col(id: number): string {
  return quoteIdent(`__floe_c${id}`);
}

function listOf(paths: readonly string[]): string {
  return `[${paths.map(sqlString).join(', ')}]`;
}

/**
 * `schema = MAP {...}` entries for fields, named by internal names. `default_value` is what DuckDB
 * yields for a file that lacks the field id: the field's v3 `initial-default`, else NULL.
 */
function schemaMap(fields: readonly { readonly id: number; readonly name: string; readonly type: string; readonly defaultValue?: string }[]): string {
  // Every default is given as text (DuckDB casts it to the field's type): MAP values need one type.
  return `MAP {${fields.map((f) => `${f.id}: {name: ${sqlString(f.name)}, type: ${sqlString(f.type)}, default_value: ${f.defaultValue === undefined ? 'NULL::VARCHAR' : `CAST(${f.defaultValue} AS VARCHAR)`}}`).join(', ')}}`;
}

/** The value of field `f` in rows of a file that lacks it (spec column projection): its initial default, else NULL. */
export function initialDefaultSql(f: NestedField): string {
  return defaultValueSql(f.type, f.initialDefault, duckdbType) ?? `NULL::${duckdbType(f.type)}`;
}

/**
 * A struct value read from a file that lacks some of its (nested) fields rebuilt with their initial
 * defaults: DuckDB matches struct children by name and fills NULL for a child the file lacks, so
 * the child is replaced by its default. A NULL struct stays NULL.
 */
function withNestedDefaults(expr: string, type: IcebergType, missing: ReadonlySet<number>): string {
  if (type.kind !== 'struct' || ![...defaultedFieldIds(type)].some((id) => missing.has(id))) return expr;
  const parts = type.fields.map((f) => {
    const child = `struct_extract(${expr}, ${sqlString(f.name)})`;
    const value = missing.has(f.id) ? initialDefaultSql(f) : withNestedDefaults(child, f.type, missing);
    return `${quoteIdent(f.name)} := ${value}`;
  });
  return `(CASE WHEN ${expr} IS NULL THEN NULL ELSE CAST(struct_pack(${parts.join(', ')}) AS ${duckdbType(type)}) END)`;
}

/** A name mapping (`schema.name-mapping.default`) as field id → names used in files without ids. */
export function parseNameMapping(json: string | undefined): ReadonlyMap<number, readonly string[]> {
  const out = new Map<number, readonly string[]>();
  if (json === undefined) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return out;
  }
  if (!Array.isArray(parsed)) return out;
  for (const entry of parsed as unknown[]) {
    if (entry === null || typeof entry !== 'object') continue;
    const e = entry as { 'field-id'?: unknown; names?: unknown };
    if (typeof e['field-id'] === 'number' && Array.isArray(e.names)) out.set(e['field-id'], e.names.filter((n): n is string => typeof n === 'string'));
  }
  return out;
}

export interface ScanSqlOptions {
  /** How to reach the locations of data and delete files (and the paths inside position delete files). */
  readonly locationMappings?: readonly LocationMapping[];
  /**
   * Data files that have no Parquet field ids (read through the name mapping): local path → the
   * file's top-level column names.
   */
  readonly filesWithoutFieldIds?: ReadonlyMap<string, readonly string[]>;
  /**
   * The top-level primitive columns of data files by field id (local path → id → column), when
   * the reader looked (`parquet_schema`). A group of files that stores every projected field under
   * one name and one physical type is read by name: `read_parquet` with a `schema` map hides the
   * files' row counts from DuckDB's join optimizer (every scan estimates 0 rows, and joins come
   * out in a bad order, 2-3x slower at TPC-H SF1); read by name, the estimates are kept.
   */
  readonly fileColumnsById?: ReadonlyMap<string, ReadonlyMap<number, FileColumn>>;
  /**
   * Every Parquet field id each data file stores, at any depth (local path → ids), when the reader
   * looked. Needed when a struct has a child with an initial default: files lacking the child read it.
   */
  readonly fileFieldIds?: ReadonlyMap<string, ReadonlySet<number>>;
}

/** How a data file stores a field: the column's name and its physical type, as one comparable text. */
export interface FileColumn {
  readonly name: string;
  readonly signature: string;
}

/**
 * The file column of each needed field when every file of a group stores every needed field (all
 * primitive) under the same name with the same physical type; otherwise `undefined` (read through
 * the field-id `schema` map). Nested fields always go through the map: their children may be renamed.
 */
function sameColumnsByName(paths: readonly string[], fields: readonly NestedField[], columns: ReadonlyMap<string, ReadonlyMap<number, FileColumn>>): ReadonlyMap<number, FileColumn> | undefined {
  if (!fields.every((f) => isPrimitive(f.type))) return undefined;
  const first = paths[0] === undefined ? undefined : columns.get(paths[0]);
  if (first === undefined) return undefined;
  const out = new Map<number, FileColumn>();
  for (const f of fields) {
    const c = first.get(f.id);
    if (c === undefined) return undefined;
    out.set(f.id, c);
  }
  if (new Set([...out.values()].map((c) => c.name)).size !== out.size) return undefined;
  for (const p of paths) {
    const cols = columns.get(p);
    if (cols === undefined) return undefined;
    for (const [id, c] of out) {
      const other = cols.get(id);
      if (other === undefined || other.name !== c.name || other.signature !== c.signature) return undefined;
    }
  }
  return out;
}

/** The fields a scan projects, in schema order. */
export function projectedFields(schema: Schema, columns: readonly number[] | 'all'): readonly NestedField[] {
  if (columns === 'all') return schema.fields;
  const wanted = new Set(columns);
  return schema.fields.filter((f) => wanted.has(f.id));
}

/** Name of the dummy column a scan yields when the query reads no column (e.g. `count(*)`). */
export const NO_COLUMN = '__floe_row';

/**
 * The DuckDB SQL of a scan: a `SELECT` yielding the projected columns (current names, Iceberg types
 * as DuckDB types), deletes applied. Use it as a view body or a subquery.
 */
export function scanSql(input: TableScanInput, options: ScanSqlOptions = {}): string {
  const mappings = options.locationMappings ?? input.locationMappings ?? [];
  const noIds = options.filesWithoutFieldIds ?? new Map<string, readonly string[]>();
  const fields = projectedFields(input.schema, input.columns);
  const byId = new Map(input.schema.fields.map((f) => [f.id, f] as const));
  const rowPositions = input.rowPositions === true;
  const outName = (f: NestedField): string => quoteIdent(scanColumnName(input.schema, f));
  const outputs = fields.length === 0 && !rowPositions ? `NULL::BOOLEAN AS ${quoteIdent(NO_COLUMN)}` : fields.map((f) => `${col(f.id)} AS ${outName(f)}`).join(', ');
  if (input.tasks.length === 0) {
    const empty = fields.length === 0 ? `NULL::BOOLEAN AS ${quoteIdent(NO_COLUMN)}` : fields.map((f) => `NULL::${duckdbType(f.type)} AS ${outName(f)}`).join(', ');
    return `SELECT ${empty}${rowPositions ? ', NULL::VARCHAR AS __floe_file_path, NULL::BIGINT AS __floe_pos' : ''} WHERE false`;
  }
  const nameMapping = parseNameMapping(input.nameMapping);
  const pathOf = (location: string): string => scanFilePath(input, location);
  // Data file paths inside position delete files, mapped as the data files were (cached copies included).
  const cachedPathSql = (expr: string, locations: readonly string[]): string => {
    const cached = input.localFiles === undefined ? [] : locations.filter((l) => input.localFiles!.has(l));
    const mapped = localPathSql(expr, mappings);
    return cached.length === 0 ? mapped : `(CASE ${expr} ${cached.map((l) => `WHEN ${sqlString(l)} THEN ${sqlString(input.localFiles!.get(l)!)}`).join(' ')} ELSE ${mapped} END)`;
  };
  const specs = new Map((input.partitionSpecs ?? []).map((p) => [p.specId, p] as const));

  // Group data files by the delete files that apply (and by whether they carry field ids).
  const groups = new Map<string, { tasks: FileScanTask[]; positionDeletes: readonly ScanFile[]; equalityDeletes: readonly ScanFile[]; withIds: boolean; fileColumns: ReadonlySet<string>; constants: ReadonlyMap<number, string>; missingDefaults: ReadonlySet<number> }>();
  // Nested fields with initial defaults among the projected struct columns (files lacking them read the default).
  const nestedDefaulted = new Set<number>();
  for (const f of fields) defaultedFieldIds(f.type, nestedDefaulted);
  for (const task of input.tasks) {
    const path = pathOf(task.file.filePath);
    const withIds = !noIds.has(path);
    const fileColumns = new Set(noIds.get(path) ?? []);
    const constants = identityConstants(specs, byId, task);
    const stored = options.fileFieldIds?.get(path);
    const missingDefaults = new Set(withIds && stored !== undefined ? [...nestedDefaulted].filter((id) => !stored.has(id)) : []);
    const key = `${withIds ? 'ids' : `names:${[...fileColumns].sort().join(',')}`}|${task.positionDeletes.map((d) => d.file.filePath).sort().join(',')}|${task.equalityDeletes.map((d) => d.file.filePath).sort().join(',')}|${[...constants].map(([id, l]) => `${id}=${l}`).join(',')}|${[...missingDefaults].sort((a, b) => a - b).join(',')}`;
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { tasks: [task], positionDeletes: task.positionDeletes, equalityDeletes: task.equalityDeletes, withIds, fileColumns, constants, missingDefaults });
    else g.tasks.push(task);
  }

  const parts: string[] = [];
  for (const g of groups.values()) {
    const equalityIds = new Set<number>();
    for (const d of g.equalityDeletes) for (const id of d.file.equalityIds ?? []) equalityIds.add(id);
    // Columns the group reads: the projection plus every equality column.
    const needed = new Map<number, NestedField>(fields.map((f) => [f.id, f] as const));
    for (const id of equalityIds) {
      const f = byId.get(id);
      if (f !== undefined) needed.set(id, f);
    }
    const constantFields = [...needed.values()].filter((f) => g.constants.has(f.id));
    const neededFields = [...needed.values()].filter((f) => !g.constants.has(f.id));
    const constantSelect = constantFields.map((f) => `${g.constants.get(f.id) as string} AS ${col(f.id)}`);
    const paths = g.tasks.map((t) => pathOf(t.file.filePath));
    const positional = g.positionDeletes.length > 0 || rowPositions;
    const extra = positional ? `, filename = '__floe_file', file_row_number = true` : '';
    let source: string;
    const byName = g.withIds && options.fileColumnsById !== undefined ? sameColumnsByName(paths, neededFields, options.fileColumnsById) : undefined;
    if (byName !== undefined) {
      // The same columns in every file: read by name (DuckDB keeps the files' row counts), cast
      // to the current type (a no-op unless the field was widened since the files were written).
      const select = [
        ...neededFields.map((f) => `CAST(${quoteIdent((byName.get(f.id) as FileColumn).name)} AS ${duckdbType(f.type)}) AS ${col(f.id)}`),
        ...constantSelect, '1 AS __floe_one',
      ].join(', ');
      source = `SELECT ${select}${positional ? ', __floe_file, file_row_number AS __floe_pos' : ''} FROM read_parquet(${listOf(paths)}${extra})`;
    } else if (g.withIds) {
      const schemaFields = neededFields.map((f) => ({ id: f.id, name: `__floe_c${f.id}`, type: duckdbType(f.type), ...(f.initialDefault !== undefined ? { defaultValue: initialDefaultSql(f) } : {}) }));
      const map = schemaFields.length === 0 ? '' : `, schema = ${schemaMap(schemaFields)}`;
      const select = [...schemaFields.map((f) => quoteIdent(f.name)), ...constantSelect, '1 AS __floe_one'].join(', ');
      source = `SELECT ${select}${positional ? ', __floe_file, file_row_number AS __floe_pos' : ''} FROM read_parquet(${listOf(paths)}${map}${extra})`;
    } else {
      // Name-mapped files (grouped by their column names): each field is the first of its mapped names
      // present in the file, NULL when none is.
      const select = neededFields.map((f) => {
        const name = (nameMapping.get(f.id) ?? []).find((n) => g.fileColumns.has(n));
        const expr = name === undefined ? initialDefaultSql(f) : quoteIdent(name);
        return `CAST(${expr} AS ${duckdbType(f.type)}) AS ${col(f.id)}`;
      });
      select.push(...constantSelect, '1 AS __floe_one');
      source = `SELECT ${select.join(', ')}${positional ? ', __floe_file, file_row_number AS __floe_pos' : ''} FROM read_parquet(${listOf(paths)}${extra})`;
    }
    const conditions: string[] = [];
    if (g.positionDeletes.length > 0) {
      const deletePaths = g.positionDeletes.map((d) => pathOf(d.file.filePath));
      const pmap = schemaMap([
        { id: POSITION_DELETE_FILE_PATH_ID, name: 'file_path', type: 'VARCHAR' },
        { id: POSITION_DELETE_POS_ID, name: 'pos', type: 'BIGINT' },
      ]);
      conditions.push(
        `NOT EXISTS (SELECT 1 FROM (SELECT ${cachedPathSql('file_path', g.tasks.map((t) => t.file.filePath))} AS file_path, pos FROM read_parquet(${listOf(deletePaths)}, schema = ${pmap})) AS p WHERE p.file_path = d.__floe_file AND p.pos = d.__floe_pos)`,
      );
    }
    for (const del of g.equalityDeletes) {
      const ids = (del.file.equalityIds ?? []).filter((id) => byId.has(id));
      if (ids.length === 0) continue;
      // Equality columns that are identity partition sources of the delete file may be absent from it.
      const delConstants = identityConstants(specs, byId, del);
      const fromFile = ids.filter((id) => !delConstants.has(id));
      const emap = fromFile.length === 0 ? '' : `, schema = ${schemaMap(fromFile.map((id) => ({ id, name: `__floe_e${id}`, type: duckdbType((byId.get(id) as NestedField).type) })))}`;
      const eCols = [...fromFile.map((id) => quoteIdent(`__floe_e${id}`)), ...ids.filter((id) => delConstants.has(id)).map((id) => `${delConstants.get(id) as string} AS ${quoteIdent(`__floe_e${id}`)}`), '1 AS __floe_one'];
      const on = ids.map((id) => `e.${quoteIdent(`__floe_e${id}`)} IS NOT DISTINCT FROM d.${col(id)}`).join(' AND ');
      conditions.push(`NOT EXISTS (SELECT 1 FROM (SELECT ${eCols.join(', ')} FROM read_parquet(${listOf([pathOf(del.file.filePath)])}${emap})) AS e WHERE ${on})`);
    }
    const positionOutputs = rowPositions
      ? `${fields.length > 0 ? ', ' : ''}(CASE d.__floe_file ${g.tasks.map((t, i) => `WHEN ${sqlString(paths[i] as string)} THEN ${sqlString(t.file.filePath)}`).join(' ')} END) AS __floe_file_path, d.__floe_pos AS __floe_pos`
      : '';
    const groupOutputs = g.missingDefaults.size === 0 ? outputs : fields.map((f) => `${withNestedDefaults(col(f.id), f.type, g.missingDefaults)} AS ${outName(f)}`).join(', ');
    parts.push(`SELECT ${groupOutputs}${positionOutputs} FROM (${source}) AS d${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''}`);
  }
  return parts.join(' UNION ALL ');
}
