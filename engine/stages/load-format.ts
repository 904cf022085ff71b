/**
 * FILE_FORMAT of COPY INTO and CREATE STAGE, as pure functions: the options as written (the stage's
 * defaults overridden key by key by the COPY's) → a checked `LoadFormat` → the DuckDB reader that
 * parses a file into the target's columns. The CSV reader never sniffs: every dialect setting is
 * explicit, so a file parses the same way whatever its first rows look like.
 */
import { floeError } from '../../grammar/errors.js';
import type { OptionValue } from '../../grammar/ir.js';
import { sqlString } from '../iceberg-io/index.js';

export type Compression = 'AUTO' | 'GZIP' | 'ZSTD' | 'NONE';

export type LoadFormat =
  | {
    readonly type: 'CSV';
    readonly delimiter: string;
    /** '' for none. */
    readonly quote: string;
    /** '' for none; defaults to the quote (a doubled quote inside a quoted field). */
    readonly escape: string;
    /** Lines skipped at the start of each file (SKIP_HEADER). */
    readonly skipHeader: number;
    /** PARSE_HEADER = TRUE: the first line names the columns (MATCH_BY_COLUMN_NAME needs it). */
    readonly parseHeader: boolean;
    /** Field values read as NULL (NULL_IF); an empty unquoted field is NULL too unless EMPTY_FIELD_AS_NULL = FALSE. */
    readonly nullIf: readonly string[];
    readonly emptyFieldAsNull: boolean;
    readonly dateFormat: string | undefined;
    readonly timestampFormat: string | undefined;
    readonly compression: Compression;
  }
  | { readonly type: 'PARQUET' }
  | { readonly type: 'JSON'; readonly compression: Compression };

export type LoadFormatType = LoadFormat['type'];

/** One option as written, key upper-case. */
export interface FormatOption {
  readonly key: string;
  readonly value: OptionValue;
}

const KEYS_BY_TYPE: Readonly<Record<LoadFormatType, ReadonlySet<string>>> = {
  CSV: new Set(['TYPE', 'FIELD_DELIMITER', 'DELIMITER', 'SKIP_HEADER', 'PARSE_HEADER', 'FIELD_OPTIONALLY_ENCLOSED_BY', 'QUOTE', 'ESCAPE',
    'NULL_IF', 'EMPTY_FIELD_AS_NULL', 'DATE_FORMAT', 'TIMESTAMP_FORMAT', 'COMPRESSION']),
  PARQUET: new Set(['TYPE']),
  JSON: new Set(['TYPE', 'COMPRESSION']),
};

/** The type a file's name suggests when no TYPE is given. */
export function formatTypeOfName(name: string): LoadFormatType {
  const n = name.toLowerCase().replace(/\.(gz|gzip|zst|zstd)$/, '');
  if (n.endsWith('.parquet')) return 'PARQUET';
  if (n.endsWith('.json') || n.endsWith('.ndjson') || n.endsWith('.jsonl')) return 'JSON';
  return 'CSV';
}

function text(o: FormatOption): string {
  return typeof o.value === 'string' ? o.value : String(o.value);
}

function bool(o: FormatOption): boolean {
  if (typeof o.value === 'boolean') return o.value;
  const v = String(o.value).toUpperCase();
  if (v === 'TRUE') return true;
  if (v === 'FALSE') return false;
  throw floeError('INVALID_PARAMETER', { name: `FILE_FORMAT ${o.key}`, detail: 'expected TRUE or FALSE' });
}

function oneChar(o: FormatOption, allowNone: boolean): string {
  const v = text(o);
  if (allowNone && (v === '' || v.toUpperCase() === 'NONE')) return '';
  if ([...v].length !== 1) throw floeError('INVALID_PARAMETER', { name: `FILE_FORMAT ${o.key}`, detail: `expected one character${allowNone ? ' or NONE' : ''}` });
  return v;
}

function compressionOf(o: FormatOption | undefined): Compression {
  if (o === undefined) return 'AUTO';
  const v = text(o).toUpperCase();
  if (v === 'AUTO' || v === 'GZIP' || v === 'ZSTD' || v === 'NONE') return v;
  throw floeError('INVALID_PARAMETER', { name: 'FILE_FORMAT COMPRESSION', detail: 'expected AUTO, GZIP, ZSTD or NONE' });
}

/**
 * The format of a COPY: the stage's options, then the statement's (a key the statement gives wins).
 * `typeHint` is used when neither names a TYPE (from the file names: `.parquet`, `.json`, else CSV).
 */
export function resolveLoadFormat(stage: readonly FormatOption[], statement: readonly FormatOption[], typeHint: LoadFormatType): LoadFormat {
  const typeOpt = [...statement, ...stage].find((o) => o.key.toUpperCase() === 'TYPE');
  const type = typeOpt === undefined ? typeHint : text(typeOpt).toUpperCase();
  if (type !== 'CSV' && type !== 'PARQUET' && type !== 'JSON') throw floeError('INVALID_PARAMETER', { name: 'FILE_FORMAT TYPE', detail: 'expected CSV, PARQUET or JSON' });
  const byKey = new Map<string, FormatOption>();
  // The stage's options are defaults: those of another type are left out (a CSV stage may hold a Parquet file).
  for (const o of stage) if (KEYS_BY_TYPE[type].has(o.key.toUpperCase())) byKey.set(o.key.toUpperCase(), o);
  for (const o of statement) {
    const key = o.key.toUpperCase();
    if (!KEYS_BY_TYPE[type].has(key)) throw floeError('INVALID_PARAMETER', { name: `FILE_FORMAT ${key}`, detail: `not an option of TYPE = ${type} (see docs/loading.md)` });
    byKey.set(key, o);
  }
  const get = (...keys: string[]) => keys.map((k) => byKey.get(k)).find((o) => o !== undefined);
  switch (type) {
    case 'PARQUET': return { type };
    case 'JSON': return { type, compression: compressionOf(get('COMPRESSION')) };
    case 'CSV': {
      const quoteOpt = get('FIELD_OPTIONALLY_ENCLOSED_BY', 'QUOTE');
      const quote = quoteOpt === undefined ? '"' : oneChar(quoteOpt, true);
      const escapeOpt = get('ESCAPE');
      const skipOpt = get('SKIP_HEADER');
      const skip = skipOpt === undefined ? 0 : Number(skipOpt.value);
      if (!Number.isInteger(skip) || skip < 0 || skip > 1_000_000) throw floeError('INVALID_PARAMETER', { name: 'FILE_FORMAT SKIP_HEADER', detail: 'expected an integer from 0' });
      const parseHeaderOpt = get('PARSE_HEADER');
      const parseHeader = parseHeaderOpt === undefined ? false : bool(parseHeaderOpt);
      if (parseHeader && skip > 0) throw floeError('INVALID_PARAMETER', { name: 'FILE_FORMAT PARSE_HEADER', detail: 'cannot be combined with SKIP_HEADER' });
      const nullIfOpt = get('NULL_IF');
      const emptyOpt = get('EMPTY_FIELD_AS_NULL');
      const dateOpt = get('DATE_FORMAT');
      const tsOpt = get('TIMESTAMP_FORMAT');
      const delimiterOpt = get('FIELD_DELIMITER', 'DELIMITER');
      return {
        type, delimiter: delimiterOpt === undefined ? ',' : oneChar(delimiterOpt, false), quote,
        escape: escapeOpt === undefined ? quote : oneChar(escapeOpt, true),
        skipHeader: skip, parseHeader,
        nullIf: nullIfOpt === undefined ? [] : [text(nullIfOpt)],
        emptyFieldAsNull: emptyOpt === undefined ? true : bool(emptyOpt),
        dateFormat: dateOpt === undefined || text(dateOpt).toUpperCase() === 'AUTO' ? undefined : text(dateOpt),
        timestampFormat: tsOpt === undefined || text(tsOpt).toUpperCase() === 'AUTO' ? undefined : text(tsOpt),
        compression: compressionOf(get('COMPRESSION')),
      };
    }
    default: throw floeError('INVALID_PARAMETER', { name: 'FILE_FORMAT TYPE', detail: 'expected CSV, PARQUET or JSON' });
  }
}

/** The compression of one file: the format's, or the file name's when AUTO. */
export function compressionOfFile(format: LoadFormat, name: string): Exclude<Compression, 'AUTO'> {
  const c = format.type === 'PARQUET' ? 'NONE' : format.compression;
  if (c !== 'AUTO') return c;
  const n = name.toLowerCase();
  return n.endsWith('.gz') || n.endsWith('.gzip') ? 'GZIP' : n.endsWith('.zst') || n.endsWith('.zstd') ? 'ZSTD' : 'NONE';
}

/** read_json's name for a file's compression. */
export function jsonCompression(format: LoadFormat, fileName: string): string {
  const c = compressionOfFile(format, fileName);
  return sqlString(c === 'NONE' ? 'uncompressed' : c.toLowerCase());
}

/** A column the reader produces: its name in the reader's output and the DuckDB type it is parsed as. */
export interface ReaderColumn {
  readonly name: string;
  readonly duckdbType: string;
}

/**
 * The DuckDB table function reading `path` (a local path) with `columns` in file order (CSV), or by
 * name (Parquet and JSON read every column; the caller selects). `extra` adds reader options
 * (`store_rejects`, `ignore_errors`).
 */
export function readerSql(format: LoadFormat, path: string, fileName: string, columns: readonly ReaderColumn[], extra: readonly string[] = []): string {
  const p = sqlString(path);
  switch (format.type) {
    case 'PARQUET':
      return `read_parquet(${p})`;
    case 'JSON': {
      const cols = columns.map((c) => `${sqlString(c.name)}: ${sqlString(c.duckdbType)}`).join(', ');
      return `read_json(${[p, `format = 'newline_delimited'`, `compression = ${jsonCompression(format, fileName)}`, `columns = {${cols}}`, ...extra].join(', ')})`;
    }
    case 'CSV': {
      const cols = columns.map((c) => `${sqlString(c.name)}: ${sqlString(c.duckdbType)}`).join(', ');
      const nulls = [...(format.emptyFieldAsNull ? [''] : []), ...format.nullIf];
      const options = [
        p, 'auto_detect = false', `delim = ${sqlString(format.delimiter)}`, `quote = ${sqlString(format.quote)}`, `escape = ${sqlString(format.escape)}`,
        `header = ${format.parseHeader ? 'true' : 'false'}`, `skip = ${format.skipHeader}`, `columns = {${cols}}`,
        `compression = ${sqlString(compressionOfFile(format, fileName).toLowerCase())}`,
        `nullstr = [${nulls.map(sqlString).join(', ')}]`, 'allow_quoted_nulls = false',
        ...(format.dateFormat === undefined ? [] : [`dateformat = ${sqlString(format.dateFormat)}`]),
        ...(format.timestampFormat === undefined ? [] : [`timestampformat = ${sqlString(format.timestampFormat)}`]),
        ...extra,
      ];
      return `read_csv(${options.join(', ')})`;
    }
    default: {
      const never: never = format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
}
