/**
 * Loading local files into a table through the write path (`floe admin import`, tests, benchmarks).
 * Workers read only the warehouse and spill folders, so the operator's file is first placed in the
 * executor's staging folder (`Executor.stagingDirectory`, under the spill root); this module gives
 * the SQL that reads it as the table's columns, in schema order, for `appendWriteRequest`.
 */
import type { Schema } from '../../catalog/iceberg/schema.js';
import { duckdbType, quoteIdent, sqlString } from './read.js';

/** Formats `floe admin import` reads. `tbl` is dbgen's `|`-separated text with a trailing `|`. */
export type ImportFormat = 'parquet' | 'csv' | 'tbl';

/** The format of a file by its name (`.gz` allowed for text formats), or `undefined`. */
export function importFormatOf(fileName: string): ImportFormat | undefined {
  const name = fileName.toLowerCase().replace(/\.gz$/, '');
  if (name.endsWith('.parquet')) return fileName.toLowerCase().endsWith('.gz') ? undefined : 'parquet';
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.tbl')) return 'tbl';
  return undefined;
}

/**
 * SQL reading a staged file as the schema's top-level columns in order: Parquet and CSV (with a
 * header) by column name, `.tbl` by position with the schema's types.
 */
export function importSourceSql(localPath: string, schema: Schema, format: ImportFormat): string {
  const names = schema.fields.map((f) => quoteIdent(f.name)).join(', ');
  switch (format) {
    case 'parquet':
      return `SELECT ${names} FROM read_parquet(${sqlString(localPath)})`;
    case 'csv':
      return `SELECT ${names} FROM read_csv(${sqlString(localPath)}, header = true)`;
    case 'tbl': {
      const columns = schema.fields.map((f) => `${sqlString(f.name)}: ${sqlString(duckdbType(f.type))}`).join(', ');
      return `SELECT ${names} FROM read_csv(${sqlString(localPath)}, delim = '|', header = false, auto_detect = false, quote = '', escape = '', null_padding = true, columns = {${columns}, '__floe_trailing': 'VARCHAR'})`;
    }
    default: {
      const never: never = format;
      throw new Error(`unknown import format ${String(never)}`);
    }
  }
}
