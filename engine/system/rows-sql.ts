/**
 * A system table's rows as one DuckDB query of typed literals, so a worker can read them like a
 * table without any access to the metadata store: `SELECT * FROM (VALUES (…), …) AS t(c1, …)`
 * with every value cast to its column type. Rows are few (history pages, catalog listings).
 */
import type { SystemColumn, SystemRow } from './provider.js';

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function stringLiteral(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** A value as a DuckDB literal of the column's type. */
export function literalSql(value: unknown, column: SystemColumn): string {
  if (value === null || value === undefined) return `CAST(NULL AS ${column.type})`;
  switch (column.type) {
    case 'VARCHAR':
      return stringLiteral(String(value));
    case 'BIGINT':
    case 'INTEGER':
    case 'DOUBLE': {
      const text = typeof value === 'bigint' ? value.toString() : String(Number(value));
      if (!/^-?(\d+(\.\d*)?(e[+-]?\d+)?|Infinity|NaN)$/i.test(text)) return `CAST(NULL AS ${column.type})`;
      return `CAST(${/Infinity|NaN/.test(text) ? stringLiteral(text) : text} AS ${column.type})`;
    }
    case 'BOOLEAN':
      return value ? 'TRUE' : 'FALSE';
    case 'TIMESTAMPTZ': {
      const d = value instanceof Date ? value : new Date(String(value));
      return Number.isNaN(d.getTime()) ? 'CAST(NULL AS TIMESTAMPTZ)' : `CAST(${stringLiteral(d.toISOString())} AS TIMESTAMPTZ)`;
    }
    case 'VARCHAR[]': {
      const items = Array.isArray(value) ? value : [];
      return `CAST([${items.map((v) => stringLiteral(String(v))).join(', ')}] AS VARCHAR[])`;
    }
    default: {
      const never: never = column.type;
      throw new Error(`unknown system column type ${String(never)}`);
    }
  }
}

/** The rows as a query with the table's column names and types. */
export function rowsSql(columns: readonly SystemColumn[], rows: readonly SystemRow[]): string {
  const names = columns.map((c) => quoteIdent(c.name)).join(', ');
  if (rows.length === 0) {
    return `SELECT ${columns.map((c) => `CAST(NULL AS ${c.type}) AS ${quoteIdent(c.name)}`).join(', ')} WHERE false`;
  }
  const tuples = rows.map((r) => `(${columns.map((c) => literalSql(r[c.name], c)).join(', ')})`);
  return `SELECT * FROM (VALUES ${tuples.join(', ')}) AS t(${names})`;
}
