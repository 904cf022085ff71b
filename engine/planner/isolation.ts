/**
 * Isolation of user SQL at the SQL level (issue 5 item 4): user SQL reaches only catalog tables and
 * Floe's system tables. Everything DuckDB offers beyond that (file, network, extension and setting
 * functions, engine statements) is refused with PERMISSION_DENIED (42501) before anything runs.
 *
 * Two gates:
 * - `checkIsolation(statement)`: over the parsed IR, every function call and table function must be
 *   on the allowlist (function-allowlist.ts); SET/RESET may only name Floe's `svc.*` settings;
 *   COPY INTO may load only from a stage or an object-store URL, never a local path.
 * - `refuseEngineStatement(sql)`: for text that did not parse, recognises DuckDB statements our
 *   grammar does not have (ATTACH, INSTALL, LOAD, PRAGMA, COPY … TO, EXPORT/IMPORT DATABASE, CALL,
 *   CREATE SECRET/MACRO, FROM 'file.csv', …) so they answer 42501 instead of a syntax error.
 *
 * Defence in depth stays with the executor: worker DuckDB instances run with
 * `enable_external_access = false` and `lock_configuration = true`.
 */
import type { FunctionCall, Statement, TableFunction } from '../../grammar/index.js';
import { FloeError, floeError, lex } from '../../grammar/index.js';
import { ALLOWED_FUNCTIONS, ALLOWED_TABLE_FUNCTIONS } from './function-allowlist.js';

/** Session settings user SQL may SET or RESET: Floe's own (`svc.workload_class`, `svc.resource_pool`, …). */
export function isFloeSetting(name: string): boolean {
  return /^svc\.[a-z_][a-z0-9_]*$/.test(name.toLowerCase());
}

/** URL schemes COPY INTO may load from (object stores; the caller vends credentials). */
const COPY_SCHEMES: ReadonlySet<string> = new Set(['s3', 's3a', 's3n', 'gs', 'gcs', 'abfs', 'abfss', 'az', 'azure']);

function denied(detail: string): FloeError<'PERMISSION_DENIED'> {
  return floeError('PERMISSION_DENIED', { detail });
}

function callName(call: FunctionCall | TableFunction): string {
  return call.name.parts.map((p) => p.name.toLowerCase()).join('.');
}

/** Throws PERMISSION_DENIED when a function call is not on the allowlist. */
export function checkFunctionCall(call: FunctionCall): void {
  const name = callName(call);
  if (call.name.parts.length !== 1 || !ALLOWED_FUNCTIONS.has(name)) throw denied(`function ${name} is not available to queries`);
}

/** Throws PERMISSION_DENIED when a table function is not on the allowlist. */
export function checkTableFunction(fn: TableFunction): void {
  const name = callName(fn);
  if (fn.name.parts.length !== 1 || !ALLOWED_TABLE_FUNCTIONS.has(name)) throw denied(`table function ${name} is not available to queries`);
}

/**
 * Checks a parsed statement (subqueries, CTEs, DML sources and view bodies included when the binder
 * calls it on them). Throws PERMISSION_DENIED naming what was refused.
 */
export function checkIsolation(statement: Statement): void {
  switch (statement.kind) {
    case 'SetSession':
      if (!isFloeSetting(statement.name)) throw denied(`SET ${statement.name}: only Floe session settings (svc.*) can be set`);
      return;
    case 'ResetSession':
      if (statement.name !== undefined && !isFloeSetting(statement.name)) throw denied(`RESET ${statement.name}: only Floe session settings (svc.*) can be reset`);
      return;
    case 'CopyInto':
      if (statement.source.kind === 'Location') {
        const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(statement.source.url);
        if (m === null || !COPY_SCHEMES.has(m[1]!.toLowerCase())) {
          throw denied('COPY INTO loads only from a stage (@stage/path) or an object-store URL (s3://, gs://, abfss://)');
        }
      }
      break;
    default:
      break;
  }
  checkNode(statement);
}

/** Walks any IR value and checks every call in it. */
export function checkNode(node: unknown): void {
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    const n = v as { kind?: string };
    if (n.kind === 'FunctionCall') checkFunctionCall(n as FunctionCall);
    else if (n.kind === 'TableFunction') checkTableFunction(n as TableFunction);
    for (const [k, x] of Object.entries(n)) if (k !== 'span' && x !== null && typeof x === 'object') visit(x);
  };
  visit(node);
}

/** Leading words of DuckDB statements Floe never runs for a user. */
const ENGINE_STATEMENTS: ReadonlySet<string> = new Set([
  'attach', 'detach', 'install', 'load', 'pragma', 'export', 'import', 'call', 'checkpoint', 'force', 'vacuum',
  'summarize', 'pivot', 'unpivot', 'prepare', 'execute', 'deallocate', 'begin', 'commit', 'rollback', 'abort',
  'start', 'transaction',
]);
/** Objects DuckDB can CREATE that Floe's grammar does not have. */
const ENGINE_OBJECTS: ReadonlySet<string> = new Set(['secret', 'macro', 'function', 'type', 'sequence', 'temp', 'temporary', 'persistent', 'index', 'extension']);

/** Names of DuckDB functions that reach files, the network, extensions, settings or engine metadata. */
const ENGINE_FUNCTION = /^(read_\w+|glob|\w+_scan|getenv|current_setting|getvariable|duckdb_\w+|pragma_\w+|query|query_table|sniff_csv|load_extension|parquet_\w+|iceberg_\w+|delta_\w+|postgres_\w+|sqlite_\w+|mysql_\w+|http_\w+|which_secret)$/;

/**
 * For statement text that did not parse: PERMISSION_DENIED when it is a DuckDB statement or form
 * Floe refuses (so escape attempts answer 42501, not 42601), else undefined (report the syntax error).
 */
export function refuseEngineStatement(sql: string): FloeError<'PERMISSION_DENIED'> | undefined {
  const lexed = lex(sql);
  let words: string[];
  let kinds: string[];
  if (lexed.ok) {
    const t = lexed.tokens;
    words = t.starts.map((s, i) => sql.slice(s, t.ends[i]).toLowerCase());
    kinds = [...t.chars].map((c) => (c === 's' ? 'string' : 'other'));
  } else {
    words = sql.toLowerCase().match(/'(?:[^']|'')*'|[a-z_][a-z0-9_]*|\S/g) ?? [];
    kinds = words.map((w) => (w.startsWith("'") ? 'string' : 'other'));
  }
  let i = 0;
  while (words[i] === '(') i++;
  const first = words[i];
  const second = words[i + 1];
  if (first === undefined) return undefined;
  if (ENGINE_STATEMENTS.has(first)) return denied(`${first.toUpperCase()} statements are not available`);
  if (first === 'copy' && second !== 'into') return denied('COPY … TO / COPY … FROM a file is not available; use COPY INTO <table> FROM @stage');
  if (first === 'set' || first === 'reset') {
    const name = words.slice(i + 1).find((w) => !['global', 'session', 'local', 'variable'].includes(w));
    if (second === 'global' || second === 'local' || second === 'variable' || (second === 'session' && name !== undefined && !isFloeSetting(name))) {
      return denied(`${first.toUpperCase()} ${second.toUpperCase()} is not available; only Floe session settings (svc.*) can be set`);
    }
  }
  if (first === 'create') {
    const objects = words.slice(i + 1, i + 4);
    const hit = objects.find((w) => ENGINE_OBJECTS.has(w));
    if (hit !== undefined) return denied(`CREATE ${hit.toUpperCase()} is not available`);
  }
  if (first === 'update' && second === 'extensions') return denied('UPDATE EXTENSIONS is not available');
  // A call of a DuckDB file, network, extension or settings function (e.g. `glob(…)`, a keyword to our grammar).
  for (let j = 0; j + 1 < words.length; j++) {
    if (words[j + 1] === '(' && ENGINE_FUNCTION.test(words[j]!)) return denied(`function ${words[j]} is not available to queries`);
  }
  // A string literal where a table belongs is a DuckDB file scan (`FROM 'data.csv'`, `DESCRIBE 'x'`).
  for (let j = 0; j + 1 < words.length; j++) {
    if (['from', 'join', 'describe', 'desc', 'show', 'table', 'into', 'using'].includes(words[j]!) && kinds[j + 1] === 'string') {
      if (words[j] === 'from' && first === 'copy') continue;
      return denied('a string literal cannot name a table (file scans are not available)');
    }
  }
  return undefined;
}
