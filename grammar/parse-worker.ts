/**
 * The parse worker (a piscina task module): parses one long statement off the event loop. Answers
 * a structured-clone-safe result: the IR is plain data; a syntax error travels as its parameters.
 */
import { Parser } from './parser.js';
import type { Span, Statement } from './ir.js';
import type { FloeError } from './errors.js';

export type ParseReply =
  | { readonly ok: true; readonly statement: Statement; readonly secrets: readonly Span[] }
  | { readonly ok: false; readonly params: FloeError<'SYNTAX_ERROR'>['params'] };

/** No cache: the main thread keeps the one cache; this parser only sees texts it sends. */
const parser = new Parser({ cacheSize: 0 });

export default function parseTask(sql: string): ParseReply {
  const r = parser.parseUncached(sql);
  return r.ok ? { ok: true, statement: r.statement, secrets: r.secrets } : { ok: false, params: r.error.params };
}
