/**
 * SQL text helpers for the editor, pure: split a script into statements (quotes and comments
 * respected), find the statement at the cursor, tokenize for highlighting with the grammar's own
 * keyword list, complete a keyword prefix, and read a syntax error's line and column.
 */
import { KEYWORD_TOKENS } from '../../grammar/keywords.js';

export const KEYWORDS: readonly string[] = [...KEYWORD_TOKENS.keys()].sort();

export interface StatementSpan { readonly start: number; readonly end: number; readonly text: string }

/** The statements of a script with their offsets; empty ones are left out. */
export function splitStatements(sql: string): StatementSpan[] {
  const out: StatementSpan[] = [];
  let start = 0;
  let i = 0;
  const push = (end: number) => {
    const text = sql.slice(start, end);
    if (text.trim() !== '') {
      const lead = text.length - text.trimStart().length;
      out.push({ start: start + lead, end, text: text.trim() });
    }
  };
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      i++;
      while (i < sql.length && !(sql[i] === c && sql[i + 1] !== c)) i += sql[i] === c ? 2 : 1;
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close < 0 ? sql.length : close + 2;
    } else if (c === ';') {
      push(i);
      i++;
      start = i;
    } else i++;
  }
  push(sql.length);
  return out;
}

/** The statement the cursor is in (or the last one before it). */
export function statementAt(sql: string, cursor: number): StatementSpan | undefined {
  const all = splitStatements(sql);
  return all.find((s) => cursor >= s.start && cursor <= s.end + 1) ?? all.filter((s) => s.start <= cursor).pop() ?? all[0];
}

export type TokenKind = 'keyword' | 'string' | 'number' | 'comment' | 'ident' | 'other';

/** Tokens for highlighting; their texts concatenate to `sql` exactly. */
export function tokenize(sql: string): { kind: TokenKind; text: string }[] {
  const re = /('(?:[^']|'')*'?)|("(?:[^"]|"")*"?)|(--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|(\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b)|([A-Za-z_][A-Za-z0-9_$]*)|(\s+|[^A-Za-z_0-9'"\s-]+|-)/g;
  const out: { kind: TokenKind; text: string }[] = [];
  for (const m of sql.matchAll(re)) {
    const kind: TokenKind = m[1] ? 'string' : m[2] ? 'ident' : m[3] ? 'comment' : m[4] ? 'number'
      : m[5] ? (KEYWORD_TOKENS.has(m[5].toLowerCase()) ? 'keyword' : 'ident') : 'other';
    out.push({ kind, text: m[0] });
  }
  return out;
}

/** Keywords starting with `prefix` (case-insensitive), upper-cased as typed in SQL. */
export function completions(prefix: string, limit = 8): string[] {
  if (prefix.length === 0) return [];
  const p = prefix.toLowerCase();
  return KEYWORDS.filter((k) => k.startsWith(p) && k !== p).slice(0, limit).map((k) => k.toUpperCase());
}

/** `syntax error at line 2, column 7: …` → {line: 2, column: 7}. */
export function errorPosition(message: string): { line: number; column: number } | undefined {
  const m = /\bline (\d+), column (\d+)/.exec(message);
  return m ? { line: Number(m[1]), column: Number(m[2]) } : undefined;
}

/** The offset of a 1-based line and column in `text`. */
export function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  return Math.min(text.length, offset + column - 1);
}

/** RFC 4180 CSV of a result: every field quoted when it needs to be; NULL is empty. */
export function toCsv(columns: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cell = (v: unknown) => {
    const s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.map(cell).join(','), ...rows.map((r) => r.map(cell).join(','))].join('\r\n') + '\r\n';
}
