/**
 * Secret redaction for query history and logs: `redact(sql)` replaces every secret literal
 * (PASSWORD, OLD PASSWORD, invitation tokens, TOTP codes, webhook SECRET) by `'***'`. A quoted
 * replacement keeps the statement readable and still valid SQL, and shows that a value was given.
 *
 * From the parse tree when the text parses (exactly the secret literals). When it does not, a
 * token-level fallback that understands quotes and comments replaces, to be safe, every string
 * literal (an unterminated one to the end of the text), any word that touches a quote character,
 * and the token after a secret keyword: a malformed `CREATE USER x PASSWORD 'y'` never keeps 'y'.
 * PUBLIC_KEY values are not secrets.
 */
import type { Parser, ParseResult } from './parser.js';

export const REDACTED = "'***'";

const SECRET_KEYWORDS: ReadonlySet<string> = new Set(['password', 'secret', 'invitation', 'totp', 'code']);

/** The text with secret literals replaced; `parser` defaults to a private uncached one. */
export function redact(sql: string, parser?: Parser): string {
  return redactParsed(sql, (parser ?? defaultParser()).tryParse(sql));
}

/** `redact` with the statement's parse result at hand (no second parse). */
export function redactParsed(sql: string, r: ParseResult): string {
  if (r.ok) {
    if (r.secrets.length === 0) return sql;
    const spans = [...r.secrets].sort((a, b) => a.start - b.start);
    let out = '';
    let at = 0;
    for (const s of spans) {
      out += sql.slice(at, s.start) + REDACTED;
      at = s.end;
    }
    return out + sql.slice(at);
  }
  return redactUnparsed(sql);
}

/** A secret keyword anywhere in the raw text, quotes and comments ignored (so none can hide one). */
const SECRET_KEYWORD_ANYWHERE = /password|secret|invitation|totp|code/i;

/**
 * Text that does not parse: once quotes are unbalanced nobody can tell which parts are inside a
 * literal, and token-level redaction can leave pieces of a secret between mis-paired quotes. Every
 * secret of the grammar follows its keyword, so everything after the first secret keyword (found
 * in the raw text, quotes and comments ignored) is replaced as a whole; the part before it gets the
 * token-level redaction.
 */
export function redactUnparsed(sql: string): string {
  const m = SECRET_KEYWORD_ANYWHERE.exec(sql);
  if (m === null) return redactTokens(sql);
  const end = m.index + m[0].length;
  return `${redactTokens(sql.slice(0, end))}${end < sql.length ? ` ${REDACTED}` : ''}`;
}

let shared: Parser | undefined;
let makeParser: (() => Parser) | undefined;
/** Wired by index.ts, so this module does not import the parser's grammar bundle eagerly. */
export function setDefaultParserFactory(f: () => Parser): void {
  makeParser = f;
}
function defaultParser(): Parser {
  if (shared === undefined) {
    if (makeParser === undefined) throw new Error('redact: no parser factory');
    shared = makeParser();
  }
  return shared;
}

/**
 * A comment or quoted identifier in text that does not parse may be commented-out SQL, or (an
 * unterminated one) the rest of the statement itself: single-quoted parts in it are redacted too.
 */
function redactComment(comment: string): string {
  return comment.replace(/[Ee]?'(?:[^']|'')*'?/g, REDACTED);
}

/** The lexer-level fallback for text that does not parse. Never throws. */
export function redactTokens(sql: string): string {
  const n = sql.length;
  let out = '';
  let i = 0;
  let afterSecretKeyword = false;
  const isWord = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c >= 128;
  while (i < n) {
    const c = sql.charCodeAt(i);
    const next = i + 1 < n ? sql.charCodeAt(i + 1) : -1;
    if (c <= 32) {
      out += sql[i];
      i++;
      continue;
    }
    if (c === 45 && next === 45) {
      const nl = sql.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      out += redactComment(sql.slice(i, end));
      i = end;
      continue;
    }
    if (c === 47 && next === 42) {
      const close = sql.indexOf('*/', i + 2);
      const end = close < 0 ? n : close + 2;
      out += redactComment(sql.slice(i, end));
      i = end;
      continue;
    }
    if (c === 39 || ((c === 69 || c === 101) && next === 39 && !(i > 0 && isWord(sql.charCodeAt(i - 1))))) {
      // a string literal: replaced whole; unterminated runs to the end of the text
      let j = c === 39 ? i + 1 : i + 2;
      const backslash = c !== 39;
      let closed = false;
      while (j < n) {
        const d = sql.charCodeAt(j);
        if (backslash && d === 92) {
          j += 2;
          continue;
        }
        if (d === 39) {
          if (j + 1 < n && sql.charCodeAt(j + 1) === 39) {
            j += 2;
            continue;
          }
          closed = true;
          j++;
          break;
        }
        j++;
      }
      out += REDACTED;
      i = closed ? j : n;
      // a word glued to the closing quote may be the rest of a broken secret
      while (i < n && isWord(sql.charCodeAt(i))) i++;
      afterSecretKeyword = false;
      continue;
    }
    if (c === 34) {
      const close = sql.indexOf('"', i + 1);
      const end = close < 0 ? n : close + 1;
      // a secret mistakenly double-quoted is still a secret; an unbalanced quote may swallow the
      // rest of the statement: quoted parts inside are redacted
      out += afterSecretKeyword ? REDACTED : redactComment(sql.slice(i, end));
      i = end;
      afterSecretKeyword = false;
      continue;
    }
    if (isWord(c)) {
      let j = i + 1;
      while (j < n && isWord(sql.charCodeAt(j))) j++;
      const w = sql.slice(i, j);
      const touchesQuote = (i > 0 && sql.charCodeAt(i - 1) === 39) || (j < n && sql.charCodeAt(j) === 39);
      if (afterSecretKeyword || touchesQuote) {
        out += REDACTED;
        afterSecretKeyword = false;
      } else {
        out += w;
        afterSecretKeyword = SECRET_KEYWORDS.has(w.toLowerCase());
      }
      i = j;
      continue;
    }
    // punctuation: "=" keeps the pending secret keyword, anything else ends it
    if (c !== 61) afterSecretKeyword = false;
    out += sql[i];
    i++;
  }
  return out;
}
