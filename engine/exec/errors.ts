/**
 * DuckDB errors → the error registry (`grammar/errors.ts`). DuckDB reports errors as text of the form
 * `<Kind> Error: <detail>`; the kind decides the code. Messages are kept (they name the value or the
 * column at fault) but never include file paths of the warehouse or spill folder: those are replaced
 * by `<file>` so storage layout does not leak to users.
 *
 * DuckDB itself returns NULL/Infinity for a division by zero; the planner emits
 * `error('division by zero')` guards where SQL semantics need the error, and this mapping turns that
 * message into DIVISION_BY_ZERO (22012).
 */
import { randomUUID } from 'node:crypto';
import { FloeError, floeError } from '../../grammar/errors.js';

/** The `<Kind>` of a DuckDB error message (`Conversion`, `Binder`, `Out of Memory`, …) and the rest. */
export function splitDuckDBMessage(message: string): { readonly kind: string; readonly detail: string } {
  const firstLine = message.split('\n')[0] ?? message;
  const m = /^(?:Failure running pending result task: )?([A-Za-z ]+?) Error: (.*)$/s.exec(firstLine);
  return m === null ? { kind: '', detail: firstLine } : { kind: (m[1] as string).trim(), detail: (m[2] as string).trim() };
}

/** Replaces quoted absolute paths and `file://` URIs with `<file>`. */
export function scrubPaths(text: string): string {
  return text.replace(/"(?:file:\/\/)?\/[^"]*"/g, '"<file>"').replace(/'(?:file:\/\/)?\/[^']*'/g, "'<file>'").replace(/file:\/\/\/\S+/g, '<file>');
}

/**
 * Maps a DuckDB error to a registry error. `interrupted` tells how an interrupt came about (the
 * executor knows whether it was a timeout or a cancel; DuckDB only says "Interrupted").
 */
export function mapDuckDBError(
  error: unknown,
  interrupted?: { readonly kind: 'timeout'; readonly limitMs: number } | { readonly kind: 'cancel'; readonly reason: string },
): FloeError {
  if (error instanceof FloeError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const { kind, detail } = splitDuckDBMessage(message);
  const clean = scrubPaths(detail);
  const lower = clean.toLowerCase();
  if (kind === 'INTERRUPT' || /interrupted/i.test(message)) {
    if (interrupted?.kind === 'timeout') return floeError('QUERY_TIMEOUT', { limitMs: interrupted.limitMs, source: 'query' });
    return floeError('QUERY_CANCELLED', { reason: interrupted?.kind === 'cancel' ? interrupted.reason : 'interrupted' });
  }
  if (lower.includes('configuration has been locked') || lower.includes('disabled by configuration') || lower.includes('disabled through configuration')) {
    return floeError('PERMISSION_DENIED', { detail: clean });
  }
  if (lower.includes('division by zero') || lower.includes('divide by zero')) return floeError('DIVISION_BY_ZERO');
  switch (kind) {
    case 'Out of Memory':
      return floeError('OUT_OF_MEMORY', { detail: `${clean} (the query needs more memory than its limit, even with spilling to disk)` });
    case 'Conversion':
      return floeError('INVALID_TEXT_REPRESENTATION', { detail: clean });
    case 'Out of Range':
      return floeError('NUMERIC_OUT_OF_RANGE', { detail: clean });
    case 'Permission':
      return floeError('PERMISSION_DENIED', { detail: clean });
    case 'Binder':
      if (/referenced column .* not found/i.test(clean)) return floeError('UNDEFINED_COLUMN', { name: /"([^"]+)"/.exec(clean)?.[1] ?? clean });
      if (/no function matches|could not choose a best candidate|cannot compare|cannot mix|implicit cast/i.test(clean)) return floeError('DATATYPE_MISMATCH', { detail: clean });
      return floeError('DATATYPE_MISMATCH', { detail: clean });
    case 'Catalog': {
      const fn = /Function with name (\S+) does not exist/i.exec(clean);
      if (fn !== null) return floeError('UNDEFINED_FUNCTION', { name: fn[1] as string });
      const table = /Table with name (\S+) does not exist/i.exec(clean);
      if (table !== null) return floeError('UNDEFINED_TABLE', { name: (table[1] as string).replace(/!$/, '') });
      return floeError('DATA_EXCEPTION', { detail: clean });
    }
    case 'Invalid Input':
    case 'Constraint':
    case 'Invalid':
    case 'Mismatch Type':
    case 'Type Mismatch':
      return kind.includes('Type') ? floeError('DATATYPE_MISMATCH', { detail: clean }) : floeError('DATA_EXCEPTION', { detail: clean });
    case 'INTERNAL':
    case 'Fatal':
      return floeError('INTERNAL_ERROR', { reference: randomUUID().slice(0, 8) });
    case 'Parser':
      return floeError('SYNTAX_ERROR', { line: 1, column: 1, expected: 'valid SQL', detail: clean });
    case 'Not implemented':
      return floeError('UNSUPPORTED_STATEMENT', { what: clean });
    case 'IO':
      if (/no files found|no such file/i.test(clean)) return floeError('DATA_EXCEPTION', { detail: `a data file of the table is missing: ${clean}` });
      return floeError('DATA_EXCEPTION', { detail: clean });
    default:
      return floeError('DATA_EXCEPTION', { detail: clean || 'execution failed' });
  }
}
