/**
 * The parser: SQL text → Statement IR, or a SYNTAX_ERROR (42601) with line, column and what was
 * expected. Each `Parser` owns its bounded LRU cache keyed by the statement text (no module-level
 * state: create one per engine/session pool). IR is immutable, so cached results are shared.
 */
import grammar from './sql.ohm-bundle.js';
import { FloeError } from './errors.js';
import { lex, lineColumn, type TokenString } from './lexer.js';
import { KEYWORD_TOKENS } from './keywords.js';
import { createActions, checkActions, evaluate, type ParseContext } from './semantics.js';
import type { Span, Statement } from './ir.js';

/** A parse that succeeded: the statement and the spans of its secret literals. */
export interface ParseSuccess {
  readonly ok: true;
  readonly statement: Statement;
  /** Source spans of secret literals (passwords, invitation tokens, TOTP codes, webhook secrets). */
  readonly secrets: readonly Span[];
}
export interface ParseFailure {
  readonly ok: false;
  readonly error: FloeError<'SYNTAX_ERROR'>;
}
export type ParseResult = ParseSuccess | ParseFailure;

export interface ParserOptions {
  /** Maximum number of cached statements (LRU). 0 disables the cache. Default 1000. */
  readonly cacheSize?: number;
  /**
   * Longest statement text accepted, in characters; longer text is a SYNTAX_ERROR before any
   * parsing. Parse time grows with the text (about 0.5 ms per 50-character VALUES row here, so
   * 1 MB costs seconds of CPU): the limit bounds what one request can cost. Default 1,000,000
   * (Trino's query.max-length). Bulk loads belong in COPY INTO.
   */
  readonly maxLength?: number;
}

export const DEFAULT_MAX_STATEMENT_LENGTH = 1_000_000;

export interface CacheStats {
  readonly size: number;
  readonly hits: number;
  readonly misses: number;
}

/** How each token character reads in "expected …" messages. */
const TOKEN_DISPLAY: ReadonlyMap<string, string> = new Map([
  ...[...KEYWORD_TOKENS].map(([word, ch]) => [ch, word.toUpperCase()] as [string, string]),
  ['w', 'an identifier'], ['q', 'an identifier'], ['n', 'a number'], ['d', 'a number'], ['s', 'a string literal'],
  ['@', 'a stage reference'], ['≠', '"<>"'], ['≤', '"<="'], ['≥', '">="'], ['‖', '"||"'], ['∷', '"::"'],
]);

export class Parser {
  readonly #cacheSize: number;
  readonly #maxLength: number;
  readonly #cache = new Map<string, ParseResult>();
  readonly #actions;
  #context: ParseContext | undefined;
  #hits = 0;
  #misses = 0;

  constructor(options: ParserOptions = {}) {
    this.#cacheSize = Math.max(0, Math.floor(options.cacheSize ?? 1000));
    this.#maxLength = Math.max(1, Math.floor(options.maxLength ?? DEFAULT_MAX_STATEMENT_LENGTH));
    this.#actions = createActions(() => {
      if (this.#context === undefined) throw new Error('semantics used outside a parse');
      return this.#context;
    });
    checkActions(grammar.createSemantics(), this.#actions);
  }

  /** Parses one statement; throws FloeError SYNTAX_ERROR when it does not parse. */
  parse(sql: string): Statement {
    const r = this.tryParse(sql);
    if (!r.ok) throw r.error;
    return r.statement;
  }

  /** Parses one statement into a result; a syntax error is a value, never thrown. Cached. */
  tryParse(sql: string): ParseResult {
    const hit = this.cached(sql);
    if (hit !== undefined) return hit;
    const result = this.parseUncached(sql);
    this.remember(sql, result);
    return result;
  }

  /** The cached result for this text, if any (counted as a hit or a miss). */
  cached(sql: string): ParseResult | undefined {
    const hit = this.#cacheSize > 0 ? this.#cache.get(sql) : undefined;
    if (hit === undefined) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    this.#cache.delete(sql);
    this.#cache.set(sql, hit);
    return hit;
  }

  /**
   * Keeps a result parsed elsewhere (a parse worker) as if parsed here. Statements carrying secrets
   * are not kept in memory beyond the parse; neither are failures, whose text may hold a secret the
   * parse could not locate (the cache key is the text).
   */
  remember(sql: string, result: ParseResult): void {
    if (this.#cacheSize > 0 && result.ok && result.secrets.length === 0) {
      this.#cache.set(sql, result);
      if (this.#cache.size > this.#cacheSize) this.#cache.delete(this.#cache.keys().next().value!);
    }
  }

  /** Parses without looking at or filling the cache. */
  parseUncached(sql: string): ParseResult {
    if (sql.length > this.#maxLength) {
      const { line, column } = lineColumn(sql, this.#maxLength);
      return { ok: false, error: new FloeError('SYNTAX_ERROR', { line, column, expected: `at most ${this.#maxLength} characters`, detail: 'statement too long; load bulk data with COPY INTO' }) };
    }
    const lexed = lex(sql);
    if (!lexed.ok) {
      const { line, column } = lineColumn(sql, lexed.error.offset);
      return { ok: false, error: new FloeError('SYNTAX_ERROR', { line, column, expected: lexed.error.expected, detail: lexed.error.detail }) };
    }
    const tokens = lexed.tokens;
    try {
      return this.#parseTokens(sql, tokens);
    } catch (e) {
      // The nesting and chain limits keep recursion far from the stack's end; this is the net
      // under them (a caller already deep in its own stack): never a crash, a SYNTAX_ERROR.
      if (e instanceof RangeError) {
        return { ok: false, error: new FloeError('SYNTAX_ERROR', { line: 1, column: 1, expected: 'a simpler statement', detail: 'statement too complex to parse' }) };
      }
      throw e;
    }
  }

  #parseTokens(sql: string, tokens: TokenString): ParseResult {
    const match = grammar.match(tokens.chars);
    if (match.failed()) {
      const pos = match.getRightmostFailurePosition();
      const offset = pos < tokens.starts.length ? tokens.starts[pos]! : tokens.ends.length > 0 ? tokens.ends[tokens.ends.length - 1]! : 0;
      const { line, column } = lineColumn(sql, offset);
      const found = pos < tokens.starts.length ? `found ${describeToken(sql, tokens, pos)}` : 'found the end of the statement';
      return { ok: false, error: new FloeError('SYNTAX_ERROR', { line, column, expected: expectedText((match as unknown as { getRightmostFailures(): readonly OhmFailure[] }).getRightmostFailures()), detail: found }) };
    }
    const context: ParseContext = { text: sql, tokens, secrets: [], cteScopes: [] };
    this.#context = context;
    try {
      const statement = evaluate(this.#actions, match, tokens.chars) as Statement;
      return { ok: true, statement, secrets: context.secrets };
    } catch (e) {
      if (e instanceof FloeError && e.code === 'SYNTAX_ERROR') return { ok: false, error: e as FloeError<'SYNTAX_ERROR'> };
      throw e;
    } finally {
      this.#context = undefined;
    }
  }

  /** Drops every cached statement. */
  clearCache(): void {
    this.#cache.clear();
  }

  get cacheStats(): CacheStats {
    return { size: this.#cache.size, hits: this.#hits, misses: this.#misses };
  }
}

/** Creates a parser with its own cache. */
export function createParser(options: ParserOptions = {}): Parser {
  return new Parser(options);
}

/** The part of Ohm's (untyped) failure objects we read. */
interface OhmFailure {
  getText(): string;
  isDescription(): boolean;
  isFluffy(): boolean;
}

/** Keywords whose value is a secret: the token after one (or after one and "=") is never echoed. */
const SECRET_KEYWORD_TOKENS: ReadonlySet<string> = new Set(['password', 'secret', 'invitation', 'totp', 'code'].map((w) => KEYWORD_TOKENS.get(w)!));

/**
 * How the offending token reads in a message. Error messages reach logs and history, so string
 * literals, quoted identifiers and whatever follows a secret keyword (a password typed without
 * quotes) are named by their kind, never echoed.
 */
function describeToken(sql: string, tokens: TokenString, pos: number): string {
  const raw = sql.slice(tokens.starts[pos]!, tokens.ends[pos]!);
  const c = raw.charCodeAt(0);
  if (c === 39 || ((c === 69 || c === 101) && raw.charCodeAt(1) === 39)) return 'a string literal';
  if (c === 34) return 'a quoted identifier';
  const before = pos > 0 && tokens.chars[pos - 1] === '=' ? pos - 2 : pos - 1;
  if (before >= 0 && SECRET_KEYWORD_TOKENS.has(tokens.chars[before]!)) return 'a value that is not a string literal';
  return raw.length > 40 ? `${JSON.stringify(raw.slice(0, 37))}…` : JSON.stringify(raw);
}

/**
 * Tokens that can start an expression, and type names. When a failure lists the tell-tale ones
 * (an identifier, a number and a string literal; BIGINT and VARCHAR), they are shown as one item,
 * "an expression" or "a data type", instead of twenty alternatives.
 */
const EXPRESSION_START: ReadonlySet<string> = new Set([
  'an identifier', 'a number', 'a string literal', '"("', '"["', '"{"', '"-"', '"+"', 'NOT', 'NULL', 'TRUE', 'FALSE',
  'CASE', 'CAST', 'TRY_CAST', 'EXTRACT', 'SUBSTRING', 'EXISTS', 'INTERVAL', 'DATE', 'TIME', 'TIMESTAMP', 'TIMESTAMPTZ',
  'LEFT', 'RIGHT', 'a positional column',
]);
const TYPE_START: ReadonlySet<string> = new Set([
  'STRUCT', 'LIST', 'ARRAY', 'MAP', 'DECIMAL', 'NUMERIC', 'DEC', 'FIXED', 'TIMESTAMP', 'DOUBLE', 'CHARACTER', 'VARCHAR',
  'CHAR', 'STRING', 'BOOLEAN', 'BOOL', 'TINYINT', 'SMALLINT', 'INT2', 'INTEGER', 'INT4', 'INT8', 'INT', 'BIGINT', 'LONG',
  'HUGEINT', 'FLOAT8', 'FLOAT4', 'FLOAT', 'REAL', 'DATE', 'TIMESTAMPTZ', 'TIME', 'TEXT', 'UUID', 'BINARY', 'VARBINARY',
  'BLOB', 'BYTEA', 'JSON',
]);

/** Replaces the members of `group` in `list` by `name` (at the first member's place). */
function collapse(list: string[], group: ReadonlySet<string>, name: string): string[] {
  const out: string[] = [];
  let placed = false;
  for (const x of list) {
    if (!group.has(x)) out.push(x);
    else if (!placed) {
      out.push(name);
      placed = true;
    }
  }
  return out;
}

/** "SELECT, WITH or an identifier" from Ohm's rightmost failures, in token terms and grammar order. */
function expectedText(failures: readonly OhmFailure[]): string {
  const seen = new Set<string>();
  // Ohm lists the failures last-tried first.
  for (const f of [...failures].reverse()) {
    if (f.isFluffy()) continue;
    const t = f.getText();
    if (t.includes('..')) continue; // character-range guards, not something a user can type
    const shown = f.isDescription() ? t : (TOKEN_DISPLAY.get(t) ?? JSON.stringify(t));
    if (shown === 'end of input') seen.add('the end of the statement');
    else seen.add(shown);
  }
  let list = [...seen];
  if (seen.has('BIGINT') && seen.has('VARCHAR')) list = collapse(list, TYPE_START, 'a data type');
  if (seen.has('an identifier') && seen.has('a number') && seen.has('a string literal')) list = collapse(list, EXPRESSION_START, 'an expression');
  if (list.length === 0) return 'a valid statement';
  if (list.length === 1) return list[0]!;
  return `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]!}`;
}
