/**
 * SQL column definitions (IR) → Iceberg schemas and partition specs, for CREATE TABLE and
 * ALTER TABLE. Pure: no catalog access.
 *
 * Type mapping (docs/query.md): tinyint/smallint/int → int, bigint → long, hugeint →
 * decimal(38,0) (Iceberg has no 128-bit integer), json → string, `decimal` without precision →
 * decimal(18,3) as DuckDB reads it; everything else by name.
 */
import { floeError } from '../../grammar/errors.js';
import type { ColumnDef, DataType, Ident, PartitionField as SqlPartitionField, RefusedConstraint, RefusedConstraintKind } from '../../grammar/ir.js';
import { unreachable } from '../../grammar/ir.js';
import type { UnboundPartitionField, UnboundPartitionSpec } from '../../catalog/iceberg/partition-spec.js';
import { schema as makeSchema, findFieldByName, type Schema } from '../../catalog/iceberg/schema.js';
import { Transforms, type Transform } from '../../catalog/iceberg/transforms.js';
import { Types, isPrimitive, nestedField, type IcebergType, type NestedField } from '../../catalog/iceberg/types.js';

/** Hands out field ids in order, as Iceberg's `TypeUtil.assignFreshIds` does. */
export class FieldIds {
  constructor(private next: number) {}
  take(): number {
    return this.next++;
  }
  get last(): number {
    return this.next - 1;
  }
}

export function icebergType(t: DataType, ids: FieldIds): IcebergType {
  switch (t.kind) {
    case 'PrimitiveType':
      switch (t.name) {
        case 'boolean': return Types.boolean;
        case 'tinyint': case 'smallint': case 'int': return Types.int;
        case 'bigint': return Types.long;
        case 'hugeint': return Types.decimal(38, 0);
        case 'float': return Types.float;
        case 'double': return Types.double;
        case 'date': return Types.date;
        case 'time': return Types.time;
        case 'timestamp': return Types.timestamp;
        case 'timestamptz': return Types.timestamptz;
        case 'string': case 'json': return Types.string;
        case 'uuid': return Types.uuid;
        case 'binary': return Types.binary;
        default: return unreachable(t.name);
      }
    case 'DecimalType': {
      const precision = t.precision ?? 18;
      const scale = t.scale ?? (t.precision === undefined ? 3 : 0);
      if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
        throw floeError('INVALID_PARAMETER', { name: 'decimal', detail: `precision must be 1-38 and scale 0-precision, got (${precision},${scale})` });
      }
      return Types.decimal(precision, scale);
    }
    case 'FixedType':
      if (t.length < 1) throw floeError('INVALID_PARAMETER', { name: 'fixed', detail: 'length must be positive' });
      return Types.fixed(t.length);
    case 'StructType': {
      const fieldIds = t.fields.map(() => ids.take());
      const names = new Set<string>();
      return Types.struct(t.fields.map((f, i) => {
        if (names.has(f.name.name)) throw floeError('DUPLICATE_OBJECT', { kind: 'struct field', name: f.name.name });
        names.add(f.name.name);
        return nestedField(fieldIds[i]!, f.name.name, icebergType(f.type, ids), f.notNull, f.comment);
      }));
    }
    case 'ListType': {
      const elementId = ids.take();
      return Types.list(elementId, icebergType(t.element, ids), false);
    }
    case 'MapType': {
      const keyId = ids.take();
      const valueId = ids.take();
      return Types.map(keyId, icebergType(t.key, ids), valueId, icebergType(t.value, ids), false);
    }
    default:
      return unreachable(t);
  }
}

/**
 * Top-level fields first take their ids, then nested ones, as Java assigns them. The primary key
 * (a column's own `PRIMARY KEY`, or the table's `PRIMARY KEY (…)`) becomes the schema's identifier
 * fields, in key order, and its columns required.
 */
export function schemaFromColumns(columns: readonly ColumnDef[], schemaId = 0, tablePrimaryKey?: readonly Ident[]): Schema {
  const ids = new FieldIds(1);
  const seen = new Set<string>();
  for (const c of columns) {
    const key = c.name.name.toLowerCase();
    if (seen.has(key)) throw floeError('DUPLICATE_OBJECT', { kind: 'column', name: c.name.name });
    seen.add(key);
  }
  const key = primaryKeyColumns(columns, tablePrimaryKey);
  const topIds = columns.map(() => ids.take());
  const fields: NestedField[] = columns.map((c, i) => nestedField(topIds[i]!, c.name.name, icebergType(c.type, ids), c.notNull || key.includes(i), c.comment));
  for (const i of key) {
    const type = fields[i]!.type;
    if (!isPrimitive(type) || type.kind === 'float' || type.kind === 'double') {
      throw floeError('INVALID_TABLE_DEFINITION', { detail: `column ${fields[i]!.name} cannot be in the PRIMARY KEY: Iceberg identifier fields cannot be float, double, struct, list or map` });
    }
  }
  return makeSchema(schemaId, fields, key.map((i) => topIds[i]!));
}

/** The positions of the primary key's columns, in key order; at most one PRIMARY KEY per table. */
function primaryKeyColumns(columns: readonly ColumnDef[], tablePrimaryKey: readonly Ident[] | undefined): number[] {
  const ownKeys = columns.flatMap((c, i) => (c.primaryKey ? [i] : []));
  if (ownKeys.length + (tablePrimaryKey === undefined ? 0 : 1) > 1) {
    throw floeError('INVALID_TABLE_DEFINITION', { detail: 'more than one PRIMARY KEY (name several columns in one table constraint: PRIMARY KEY (a, b))' });
  }
  if (tablePrimaryKey === undefined) return ownKeys;
  const out: number[] = [];
  for (const name of tablePrimaryKey) {
    const i = columns.findIndex((c) => (name.quoted ? c.name.name === name.name : c.name.name.toLowerCase() === name.name.toLowerCase()));
    if (i < 0) throw floeError('UNDEFINED_COLUMN', { name: name.name });
    if (out.includes(i)) throw floeError('INVALID_TABLE_DEFINITION', { detail: `column ${columns[i]!.name.name} appears twice in the PRIMARY KEY` });
    out.push(i);
  }
  return out;
}

/** How a refused constraint is named in its error. */
const REFUSED_CONSTRAINT_NAMES: Readonly<Record<RefusedConstraintKind, string>> = {
  unique: 'UNIQUE constraint', check: 'CHECK constraint', default: 'DEFAULT value', references: 'REFERENCES (foreign key) constraint',
  foreignKey: 'FOREIGN KEY constraint', generated: 'generated column (GENERATED … AS (…))', identity: 'identity column (GENERATED … AS IDENTITY)',
  collate: 'COLLATE', autoincrement: 'AUTOINCREMENT',
};

/**
 * Refuses (0A000, naming it) the first constraint an Iceberg table cannot keep: a column's, then
 * the table's. Iceberg has no enforcement of any other constraint, and accepting one silently
 * would promise a guarantee no writer (Floe, Spark, PyIceberg) keeps.
 */
export function refuseConstraints(columns: readonly ColumnDef[], tableConstraints: readonly RefusedConstraint[], table: string): void {
  for (const c of columns) refuseColumnConstraints(c.name.name, c.refused);
  const r = tableConstraints[0];
  if (r !== undefined) throw floeError('UNSUPPORTED_CONSTRAINT', { constraint: REFUSED_CONSTRAINT_NAMES[r.constraint], on: `table ${table}` });
}

/** Refuses the first constraint of one column that an Iceberg table cannot keep (CREATE TABLE, ADD COLUMN). */
export function refuseColumnConstraints(column: string, refused: readonly RefusedConstraint[]): void {
  const r = refused[0];
  if (r !== undefined) throw floeError('UNSUPPORTED_CONSTRAINT', { constraint: REFUSED_CONSTRAINT_NAMES[r.constraint], on: `column ${column}` });
}

export function transformOf(p: SqlPartitionField): Transform {
  switch (p.transform) {
    case 'identity': return Transforms.identity;
    case 'bucket':
      if (!p.parameter || p.parameter < 1) throw floeError('INVALID_PARAMETER', { name: 'bucket', detail: 'needs a positive bucket count' });
      return Transforms.bucket(p.parameter);
    case 'truncate':
      if (!p.parameter || p.parameter < 1) throw floeError('INVALID_PARAMETER', { name: 'truncate', detail: 'needs a positive width' });
      return Transforms.truncate(p.parameter);
    case 'year': return Transforms.year;
    case 'month': return Transforms.month;
    case 'day': return Transforms.day;
    case 'hour': return Transforms.hour;
    case 'void': return Transforms.void;
    default: return unreachable(p.transform);
  }
}

/** PARTITIONED BY fields against the table's schema; field names as Iceberg's defaults. */
export function partitionSpecFromSql(fields: readonly SqlPartitionField[], s: Schema): UnboundPartitionSpec {
  const out: UnboundPartitionField[] = fields.map((p) => {
    const source = findFieldByName(s, p.column.name, false);
    if (!source) throw floeError('UNDEFINED_COLUMN', { name: p.column.name });
    const transform = transformOf(p);
    const name = transform.kind === 'identity' ? source.name
      : transform.kind === 'bucket' ? `${source.name}_bucket`
      : transform.kind === 'truncate' ? `${source.name}_trunc`
      : `${source.name}_${transform.kind}`;
    return { sourceId: source.id, name, transform };
  });
  return { fields: out };
}
