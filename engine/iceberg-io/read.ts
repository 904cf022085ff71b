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
import type { Schema } from '../../catalog/iceberg/schema.js';
import type { IcebergType, NestedField } from '../../catalog/iceberg/types.js';
import { remapLocation } from '../../storage-creds/file-io.js';
import type { LocationMapping } from '../../storage-creds/file-io.js';
import { resolveLocalPath } from '../../storage-creds/local-file-io.js';
import type { TableScanInput } from '../fragments.js';

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
  return `regexp_replace(regexp_replace(${e}, '^file://(localhost)?(?=/)', ''), '^file:(?=/)', '')`;
}

/** Internal column name of field `id` inside the scan. */
function col(id: number): string {
  return quoteIdent(`__floe_c${id}`);
}

function listOf(paths: readonly string[]): string {
  return `[${paths.map(sqlString).join(', ')}]`;
}

/** `schema = MAP {...}` entries for fields, named by internal names. */
function schemaMap(fields: readonly { readonly id: number; readonly name: string; readonly type: string }[]): string {
  return `MAP {${fields.map((f) => `${f.id}: {name: ${sqlString(f.name)}, type: ${sqlString(f.type)}, default_value: NULL::${f.type}}`).join(', ')}}`;
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
  /** Local paths of data files that have no Parquet field ids (read through the name mapping). */
  readonly filesWithoutFieldIds?: ReadonlySet<string>;
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
  const noIds = options.filesWithoutFieldIds ?? new Set<string>();
  const fields = projectedFields(input.schema, input.columns);
  const byId = new Map(input.schema.fields.map((f) => [f.id, f] as const));
  const outputs = fields.length === 0 ? `NULL::BOOLEAN AS ${quoteIdent(NO_COLUMN)}` : fields.map((f) => `${col(f.id)} AS ${quoteIdent(f.name)}`).join(', ');
  if (input.tasks.length === 0) {
    const empty = fields.length === 0 ? `NULL::BOOLEAN AS ${quoteIdent(NO_COLUMN)}` : fields.map((f) => `NULL::${duckdbType(f.type)} AS ${quoteIdent(f.name)}`).join(', ');
    return `SELECT ${empty} WHERE false`;
  }
  const nameMapping = parseNameMapping(input.nameMapping);

  // Group data files by the delete files that apply (and by whether they carry field ids).
  const groups = new Map<string, { tasks: FileScanTask[]; positionDeletes: readonly ScanFile[]; equalityDeletes: readonly ScanFile[]; withIds: boolean }>();
  for (const task of input.tasks) {
    const path = localPath(task.file.filePath, mappings);
    const withIds = !noIds.has(path);
    const key = `${withIds ? 'ids' : 'names'}|${task.positionDeletes.map((d) => d.file.filePath).sort().join(',')}|${task.equalityDeletes.map((d) => d.file.filePath).sort().join(',')}`;
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { tasks: [task], positionDeletes: task.positionDeletes, equalityDeletes: task.equalityDeletes, withIds });
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
    const neededFields = [...needed.values()];
    const paths = g.tasks.map((t) => localPath(t.file.filePath, mappings));
    const positional = g.positionDeletes.length > 0;
    const extra = positional ? `, filename = '__floe_file', file_row_number = true` : '';
    let source: string;
    if (g.withIds) {
      const schemaFields = neededFields.map((f) => ({ id: f.id, name: `__floe_c${f.id}`, type: duckdbType(f.type) }));
      const map = schemaFields.length === 0 ? '' : `, schema = ${schemaMap(schemaFields)}`;
      const select = schemaFields.length === 0 ? '1 AS __floe_one' : schemaFields.map((f) => quoteIdent(f.name)).join(', ');
      source = `SELECT ${select}${positional ? ', __floe_file, file_row_number AS __floe_pos' : ''} FROM read_parquet(${listOf(paths)}${map}${extra})`;
    } else {
      // Name-mapped files: pick each field by the first of its mapped names present in the file (the
      // union_by_name read yields NULL for a name absent from a file).
      const select = neededFields.map((f) => {
        const names = nameMapping.get(f.id) ?? [];
        const expr = names.length === 0 ? 'NULL' : names.length === 1 ? quoteIdent(names[0] as string) : `coalesce(${names.map(quoteIdent).join(', ')})`;
        return `CAST(${expr} AS ${duckdbType(f.type)}) AS ${col(f.id)}`;
      });
      if (select.length === 0) select.push('1 AS __floe_one');
      source = `SELECT ${select.join(', ')}${positional ? ', __floe_file, file_row_number AS __floe_pos' : ''} FROM read_parquet(${listOf(paths)}, union_by_name = true${extra})`;
    }
    const conditions: string[] = [];
    if (positional) {
      const deletePaths = g.positionDeletes.map((d) => localPath(d.file.filePath, mappings));
      const pmap = schemaMap([
        { id: POSITION_DELETE_FILE_PATH_ID, name: 'file_path', type: 'VARCHAR' },
        { id: POSITION_DELETE_POS_ID, name: 'pos', type: 'BIGINT' },
      ]);
      conditions.push(
        `NOT EXISTS (SELECT 1 FROM (SELECT ${localPathSql('file_path', mappings)} AS file_path, pos FROM read_parquet(${listOf(deletePaths)}, schema = ${pmap})) AS p WHERE p.file_path = d.__floe_file AND p.pos = d.__floe_pos)`,
      );
    }
    for (const del of g.equalityDeletes) {
      const ids = (del.file.equalityIds ?? []).filter((id) => byId.has(id));
      if (ids.length === 0) continue;
      const emap = schemaMap(ids.map((id) => ({ id, name: `__floe_e${id}`, type: duckdbType((byId.get(id) as NestedField).type) })));
      const on = ids.map((id) => `e.${quoteIdent(`__floe_e${id}`)} IS NOT DISTINCT FROM d.${col(id)}`).join(' AND ');
      conditions.push(`NOT EXISTS (SELECT 1 FROM read_parquet(${listOf([localPath(del.file.filePath, mappings)])}, schema = ${emap}) AS e WHERE ${on})`);
    }
    parts.push(`SELECT ${outputs} FROM (${source}) AS d${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''}`);
  }
  return parts.join(' UNION ALL ');
}
