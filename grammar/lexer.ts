/**
 * The SQL lexer. It turns statement text into the token string the Ohm grammar (sql.ohm) matches:
 * one character per token, with the token's source offsets kept beside it.
 *
 * Why a lexer in front of Ohm: Ohm builds a CST node for every character it matches and memoizes
 * every rule application, so a character-level SQL grammar cost 5-15 ms per TPC-H query here
 * (even a trivial character-level tokenizer grammar costs ~2 ms for q02). Matching one character
 * per token is several times cheaper, removes whitespace skipping from every rule, and turns every
 * keyword test into a one-character comparison.
 *
 * Token characters: "w" word (not a keyword), "q" quoted identifier, "n" integer, "d" other
 * number, "s" string literal ('…' or E'…'), "@" stage reference, "$" positional column ($1, $2 …:
 * COPY INTO's file columns), "≠" (<> and !=), "≤", "≥", "‖"
 * (||), "∷" (::), "=" (= and ==), the punctuation ( ) , . ; < > + - * / % [ ] { } : as itself, and
 * for each keyword its private-use character from keywords.ts. Comments (-- … and /* … *\/) and
 * whitespace produce no token.
 */
import { KEYWORD_TOKENS } from './keywords.js';

/** The token string and, per token, its [start, end) character offsets in the source text. */
export interface TokenString {
  readonly chars: string;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

/** Why the text could not be tokenized: where, and what was expected there. */
export interface LexError {
  readonly offset: number;
  readonly expected: string;
  readonly detail: string;
}

export type LexResult = { readonly ok: true; readonly tokens: TokenString } | { readonly ok: false; readonly error: LexError };

/**
 * Deepest nesting of ( [ { and CASE … END a statement may have. The grammar and every IR walker
 * recurse once per level (a nested scalar subquery costs the parser about 6 KB of stack), and a
 * stack overflow must never escape as a crash: 64 levels is far beyond hand-written SQL and leaves
 * the default 1 MB stack a wide margin.
 */
export const MAX_NESTING_DEPTH = 64;

const OPENERS = new Set(['(', '[', '{', KEYWORD_TOKENS.get('case')!]);
const CLOSERS = new Set([')', ']', '}', KEYWORD_TOKENS.get('end')!]);

const SINGLE = new Set(['(', ')', ',', '.', ';', '=', '<', '>', '+', '-', '*', '/', '%', '[', ']', '{', '}', ':']);

function isWordStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c >= 128;
}
function isWordPart(c: number): boolean {
  return isWordStart(c) || (c >= 48 && c <= 57) || c === 36;
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isStageChar(c: number): boolean {
  // letters, digits and _ . / - ~ % =
  return isWordPart(c) && c !== 36 ? true : c === 46 || c === 47 || c === 45 || c === 126 || c === 37 || c === 61;
}

/** Splits `text` into tokens. Never throws. */
export function lex(text: string): LexResult {
  const n = text.length;
  let chars = '';
  const starts: number[] = [];
  const ends: number[] = [];
  let depth = 0;
  let tooDeep = -1;
  const push = (ch: string, start: number, end: number): void => {
    chars += ch;
    starts.push(start);
    ends.push(end);
    if (OPENERS.has(ch)) {
      if (++depth > MAX_NESTING_DEPTH && tooDeep < 0) tooDeep = start;
    } else if (CLOSERS.has(ch) && depth > 0) depth--;
  };
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c <= 32) {
      i++;
      continue;
    }
    const next = i + 1 < n ? text.charCodeAt(i + 1) : -1;
    // -- line comment
    if (c === 45 && next === 45) {
      const nl = text.indexOf('\n', i + 2);
      i = nl < 0 ? n : nl + 1;
      continue;
    }
    // /* block comment */
    if (c === 47 && next === 42) {
      const close = text.indexOf('*/', i + 2);
      if (close < 0) return { ok: false, error: { offset: i, expected: '"*/"', detail: 'unterminated comment' } };
      i = close + 2;
      continue;
    }
    const start = i;
    if (isWordStart(c)) {
      // E'…' string with backslash escapes
      if ((c === 69 || c === 101) && next === 39) {
        const end = scanQuoted(text, i + 1, 39, true);
        if (end < 0) return { ok: false, error: { offset: i, expected: "a closing quote (')", detail: 'unterminated string literal' } };
        push('s', start, end);
        i = end;
        continue;
      }
      i++;
      while (i < n && isWordPart(text.charCodeAt(i))) i++;
      const kw = KEYWORD_TOKENS.get(text.slice(start, i).toLowerCase());
      push(kw ?? 'w', start, i);
      continue;
    }
    if (isDigit(c) || (c === 46 && isDigit(next))) {
      let integer = true;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
      if (i < n && text.charCodeAt(i) === 46) {
        integer = false;
        i++;
        while (i < n && isDigit(text.charCodeAt(i))) i++;
      }
      if (i < n && (text.charCodeAt(i) | 32) === 101) {
        let j = i + 1;
        const s = j < n ? text.charCodeAt(j) : -1;
        if (s === 43 || s === 45) j++;
        if (j < n && isDigit(text.charCodeAt(j))) {
          integer = false;
          i = j;
          while (i < n && isDigit(text.charCodeAt(i))) i++;
        }
      }
      push(integer ? 'n' : 'd', start, i);
      continue;
    }
    if (c === 39) {
      const end = scanQuoted(text, i, 39, false);
      if (end < 0) return { ok: false, error: { offset: i, expected: "a closing quote (')", detail: 'unterminated string literal' } };
      push('s', start, end);
      i = end;
      continue;
    }
    if (c === 34) {
      const end = scanQuoted(text, i, 34, false);
      if (end < 0) return { ok: false, error: { offset: i, expected: 'a closing double quote (")', detail: 'unterminated quoted identifier' } };
      if (end === i + 2) return { ok: false, error: { offset: i, expected: 'an identifier', detail: 'zero-length quoted identifier' } };
      push('q', start, end);
      i = end;
      continue;
    }
    if (c === 64) {
      i++;
      while (i < n && isStageChar(text.charCodeAt(i))) i++;
      if (i === start + 1) return { ok: false, error: { offset: start, expected: 'a stage name after "@"', detail: 'empty stage reference' } };
      push('@', start, i);
      continue;
    }
    if (c === 36 && isDigit(next)) {
      i++;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
      push('$', start, i);
      continue;
    }
    const two = text.slice(i, i + 2);
    const op2 = two === '<>' || two === '!=' ? '≠' : two === '<=' ? '≤' : two === '>=' ? '≥' : two === '||' ? '‖' : two === '::' ? '∷' : two === '==' ? '=' : undefined;
    if (op2 !== undefined) {
      push(op2, start, i + 2);
      i += 2;
      continue;
    }
    const ch = text[i]!;
    if (SINGLE.has(ch)) {
      push(ch, start, i + 1);
      i++;
      continue;
    }
    return { ok: false, error: { offset: i, expected: 'a valid token', detail: `unexpected character ${JSON.stringify(String.fromCodePoint(text.codePointAt(i)!))}` } };
  }
  if (tooDeep >= 0) {
    return { ok: false, error: { offset: tooDeep, expected: `at most ${MAX_NESTING_DEPTH} levels of nesting`, detail: 'statement nested too deeply' } };
  }
  return { ok: true, tokens: { chars, starts, ends } };
}

/**
 * Scans a quoted token starting at the opening quote `open`; returns the offset after the closing
 * quote, or -1 when unterminated. A doubled quote stands for itself; with `backslash`, a backslash
 * escapes the next character.
 */
function scanQuoted(text: string, open: number, quote: number, backslash: boolean): number {
  const n = text.length;
  let i = open + 1;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (backslash && c === 92) {
      i += 2;
      continue;
    }
    if (c === quote) {
      if (i + 1 < n && text.charCodeAt(i + 1) === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return -1;
}

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}
