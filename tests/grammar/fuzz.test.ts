/**
 * Fuzzing the parser with fast-check: random token sequences and mutations (token insert, delete,
 * swap, duplicate, replace, truncate; character truncation) of the corpus statements. For every input the
 * parser returns an IR or a SYNTAX_ERROR and never throws anything else; a statement that parses
 * still round-trips through toSql; each case's time is bounded and the slowest is reported.
 * Redaction: no secret of a mutated principal statement survives `redact`.
 */
import t from 'tap';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { createParser, toSql, withoutSpans, redact, lex, type ParseResult, type Statement } from '../../grammar/index.js';
import { KEYWORD_TOKENS } from '../../grammar/keywords.js';
import { MAX_NESTING_DEPTH } from '../../grammar/lexer.js';
import { MAX_EXPRESSION_CHAIN } from '../../grammar/semantics.js';
import { decodeString } from '../../grammar/semantics.js';
import { loadValidCorpus } from './corpus.js';

const parser = createParser({ cacheSize: 0 });
const corpus = loadValidCorpus().map((v) => v.sql);
/**
 * A case that takes more CPU than this is a bug (runaway backtracking). Measured as this process's
 * CPU time, not wall time: a loaded machine leaves the process waiting for a core for as long as it
 * likes, which says nothing about the parser. The bound is wide for garbage collection.
 */
const CASE_TIME_LIMIT_MS = 1000;

/** CPU time of this process (user and system, all threads) in ms. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
const SEED = Number(process.env.FLOE_FUZZ_SEED ?? Date.now() % 2 ** 31);
t.comment(`fast-check seed ${SEED} (rerun with FLOE_FUZZ_SEED=${SEED})`);

/** Splits a statement into its token texts (the lexer's tokens; comments and whitespace dropped). */
function tokensOf(sql: string): string[] {
  const r = lex(sql);
  if (!r.ok) return [sql];
  return r.tokens.starts.map((s, i) => sql.slice(s, r.tokens.ends[i]));
}

const KEYWORDS = [...KEYWORD_TOKENS.keys()];
const PUNCTUATION = ['(', ')', ',', '.', ';', '=', '<', '>', '<=', '>=', '<>', '!=', '+', '-', '*', '/', '%', '||', '::', '[', ']', '{', '}', ':'];
const tokenArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...KEYWORDS).map((k) => (k.length % 2 === 0 ? k.toUpperCase() : k)) },
  { weight: 3, arbitrary: fc.constantFrom(...PUNCTUATION) },
  { weight: 2, arbitrary: fc.constantFrom('a', 't', 'x1', 'users', 'lake', 'o_orderkey', '_c$') },
  { weight: 1, arbitrary: fc.constantFrom('"Quoted"', '"a""b"', '"select"') },
  { weight: 1, arbitrary: fc.constantFrom('0', '42', '3.14', '.5', '1e10', '2E-3', '18446744073709551616') },
  { weight: 1, arbitrary: fc.constantFrom("'s'", "''", "'it''s'", "E'a\\nb'", "'-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----'") },
  { weight: 1, arbitrary: fc.constantFrom('@stage', '@s/p/', '-- c\n', '/* c */', '\n', "'unterminated", '"', '/*', '#', '?', '$1', '@') },
);

/** One fuzz input, and how it was made (for the report). */
type Case = { readonly sql: string; readonly how: string };

const randomTokens: fc.Arbitrary<Case> = fc.array(tokenArb, { maxLength: 40 }).map((ts) => ({ sql: ts.join(' '), how: 'random tokens' }));

type Mutation =
  | { readonly op: 'insert'; readonly at: number; readonly token: string }
  | { readonly op: 'delete'; readonly at: number }
  | { readonly op: 'swap'; readonly at: number; readonly with: number }
  | { readonly op: 'duplicate'; readonly at: number }
  | { readonly op: 'replace'; readonly at: number; readonly token: string }
  | { readonly op: 'truncate'; readonly at: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), token: tokenArb }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('swap' as const), at: fc.nat(), with: fc.nat() }),
  fc.record({ op: fc.constant('duplicate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('replace' as const), at: fc.nat(), token: tokenArb }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
);

function mutate(tokens: readonly string[], mutations: readonly Mutation[]): string[] {
  const out = [...tokens];
  for (const m of mutations) {
    const n = out.length;
    switch (m.op) {
      case 'insert': out.splice(m.at % (n + 1), 0, m.token); break;
      case 'delete': if (n > 0) out.splice(m.at % n, 1); break;
      case 'swap': if (n > 1) { const i = m.at % n; const j = m.with % n; [out[i], out[j]] = [out[j]!, out[i]!]; } break;
      case 'duplicate': if (n > 0) { const i = m.at % n; out.splice(i, 0, out[i]!); } break;
      case 'replace': if (n > 0) out[m.at % n] = m.token; break;
      case 'truncate': out.length = n === 0 ? 0 : m.at % n; break;
    }
  }
  return out;
}

const corpusTokens = corpus.map(tokensOf);
const mutatedCorpus: fc.Arbitrary<Case> = fc
  .tuple(fc.nat({ max: corpus.length - 1 }), fc.array(mutationArb, { minLength: 1, maxLength: 3 }))
  .map(([i, ms]) => ({ sql: mutate(corpusTokens[i]!, ms).join(' '), how: `corpus #${i} ${ms.map((m) => m.op).join('+')}` }));
const truncatedText: fc.Arbitrary<Case> = fc
  .tuple(fc.nat({ max: corpus.length - 1 }), fc.nat())
  .map(([i, at]) => ({ sql: corpus[i]!.slice(0, at % (corpus[i]!.length + 1)), how: `corpus #${i} cut at a character` }));

let slowest = { ms: 0, sql: '', how: '' };
let parsed = 0;
let rejected = 0;

/** The property of every input: IR or SYNTAX_ERROR, bounded CPU time, round trip for what parses. */
function check(c: Case): boolean {
  const start = cpuMs();
  let r: ParseResult;
  try {
    r = parser.tryParse(c.sql);
  } catch (e) {
    throw new Error(`parser threw ${String(e)} for ${JSON.stringify(c.sql)} (${c.how})`);
  }
  const ms = cpuMs() - start;
  if (ms > slowest.ms) slowest = { ms, sql: c.sql, how: c.how };
  if (ms > CASE_TIME_LIMIT_MS) throw new Error(`${ms.toFixed(0)} ms for ${JSON.stringify(c.sql)}`);
  if (!r.ok) {
    rejected++;
    if (r.error.code !== 'SYNTAX_ERROR' || r.error.sqlState !== '42601') throw new Error(`not a SYNTAX_ERROR: ${r.error.code}`);
    const { line, column } = r.error.params;
    if (!(Number.isInteger(line) && line >= 1 && Number.isInteger(column) && column >= 1)) throw new Error('bad position');
    return true;
  }
  parsed++;
  const text = toSql(r.statement);
  const again = parser.tryParse(text);
  if (!again.ok) throw new Error(`toSql output does not parse: ${again.error.message}\n${c.sql}\n=> ${text}`);
  if (!isDeepStrictEqual(withoutSpans(again.statement), withoutSpans(r.statement))) throw new Error(`round trip differs\n${c.sql}\n=> ${text}`);
  return true;
}

t.test('random token sequences: IR or SYNTAX_ERROR, never a throw', async (t) => {
  fc.assert(fc.property(randomTokens, check), { numRuns: 4000, seed: SEED });
  t.pass('4000 random token sequences');
});

t.test('mutated corpus statements: IR or SYNTAX_ERROR, never a throw, round trip when parsed', async (t) => {
  fc.assert(fc.property(mutatedCorpus, check), { numRuns: 5000, seed: SEED });
  fc.assert(fc.property(truncatedText, check), { numRuns: 1000, seed: SEED });
  t.pass('6000 mutated corpus statements');
});

t.test('limits: deep nesting and long chains are syntax errors, not stack overflows', async (t) => {
  const shapes: Record<string, (n: number) => string> = {
    parentheses: (n) => `SELECT ${'('.repeat(n)}1${')'.repeat(n)}`,
    'unclosed parentheses': (n) => `SELECT ${'('.repeat(n)}`,
    subqueries: (n) => `SELECT * FROM ${'(SELECT * FROM '.repeat(n)}t${')'.repeat(n)}`,
    'CASE nesting': (n) => `SELECT ${'CASE WHEN TRUE THEN '.repeat(n)}1${' END'.repeat(n)}`,
    calls: (n) => `SELECT ${'f('.repeat(n)}1${')'.repeat(n)}`,
    lists: (n) => `SELECT ${'['.repeat(n)}1${']'.repeat(n)}`,
  };
  for (const [name, make] of Object.entries(shapes)) {
    const ok = parser.tryParse(make(MAX_NESTING_DEPTH));
    if (!name.startsWith('unclosed')) t.ok(ok.ok, `${name}: ${MAX_NESTING_DEPTH} levels parse`);
    for (const n of [MAX_NESTING_DEPTH + 1, 5000]) {
      const r = parser.tryParse(make(n));
      t.ok(!r.ok && r.error.params.detail === 'statement nested too deeply', `${name}: ${n} levels are a SYNTAX_ERROR`);
    }
  }
  const chains: Record<string, (n: number) => string> = {
    OR: (n) => `SELECT * FROM t WHERE ${Array.from({ length: n + 1 }, (_, i) => `a${i}`).join(' OR ')}`,
    '+': (n) => `SELECT 1${' + 1'.repeat(n)}`,
    NOT: (n) => `SELECT ${'NOT '.repeat(n)}TRUE`,
    '-': (n) => `SELECT ${'- '.repeat(n)}1`,
    '::': (n) => `SELECT 1${'::int'.repeat(n)}`,
  };
  for (const [name, make] of Object.entries(chains)) {
    const ok = parser.tryParse(make(MAX_EXPRESSION_CHAIN));
    t.ok(ok.ok, `${name}: ${MAX_EXPRESSION_CHAIN} operators parse`);
    if (ok.ok) t.doesNotThrow(() => toSql(ok.statement), `${name}: and unparse`);
    const r = parser.tryParse(make(MAX_EXPRESSION_CHAIN + 1));
    t.ok(!r.ok && /expression too long/.test(r.error.message), `${name}: ${MAX_EXPRESSION_CHAIN + 1} operators are a SYNTAX_ERROR`);
  }
  const list = `SELECT * FROM t WHERE a IN (${Array.from({ length: 5000 }, (_, i) => i).join(', ')})`;
  t.ok(parser.tryParse(list).ok, 'an IN list has no such limit (5000 items)');
  const small = createParser({ cacheSize: 0, maxLength: 1000 });
  t.ok(small.tryParse(list.slice(0, 1000).replace(/,[^,]*$/, ')')).ok, 'a statement of maxLength characters parses');
  const long = small.tryParse(list);
  t.ok(!long.ok && /statement too long/.test(long.error.message), `longer text is a SYNTAX_ERROR without parsing: ${long.ok ? '' : long.error.message}`);
});

/** The secrets of a parsed statement, from its IR. */
function secretsOf(s: Statement): string[] {
  switch (s.kind) {
    case 'CreateUser': case 'AlterUserSet': return s.options.password === undefined ? [] : [s.options.password];
    case 'AlterSelfPassword': return [s.newPassword, s.oldPassword];
    case 'AlterSelfVerifyMfa': case 'AlterSelfDisableMfa': return [s.code];
    case 'RedeemInvitation': return [s.token, s.password];
    case 'CreateWebhook': return [s.secret];
    default: return [];
  }
}

t.test('redaction: no secret survives redact in a mutated principal statement', async (t) => {
  // Corpus statements that carry secrets, with the raw text of each secret literal.
  const principal = corpus
    .map((sql) => {
      const r = parser.tryParse(sql);
      if (!r.ok || r.secrets.length === 0) return undefined;
      return { tokens: tokensOf(sql), secrets: r.secrets.map((s) => sql.slice(s.start, s.end)) };
    })
    .filter((x): x is { tokens: string[]; secrets: string[] } => x !== undefined);
  t.ok(principal.length >= 25, `${principal.length} principal statements with secrets`);
  const inner = (literal: string): string[] => {
    const body = literal.startsWith("'") ? literal.slice(1, -1) : literal.slice(2, -1);
    return [body, decodeString(literal)].filter((x) => x.length >= 3);
  };
  const arb = fc.tuple(fc.nat({ max: principal.length - 1 }), fc.array(mutationArb, { minLength: 1, maxLength: 3 }));
  let unparsable = 0;
  fc.assert(
    fc.property(arb, ([i, ms]) => {
      const p = principal[i]!;
      const sql = mutate(p.tokens, ms).join(' ');
      const redacted = redact(sql, parser);
      const r = parser.tryParse(sql);
      // What must not survive: when the text parses, the secrets of the statement it now is;
      // when it does not, every secret literal of the statement it came from.
      const secrets = r.ok ? secretsOf(r.statement).filter((s) => s.length >= 3) : p.secrets.flatMap(inner);
      if (!r.ok) {
        unparsable++;
        for (const s of secrets) if (r.error.message.includes(s)) throw new Error(`error message echoes a secret: ${r.error.message}`);
      }
      for (const s of secrets) if (sql.includes(s) && redacted.includes(s)) throw new Error(`secret ${JSON.stringify(s)} survives redact:\n${sql}\n=> ${redacted}`);
      return true;
    }),
    { numRuns: 2000, seed: SEED },
  );
  t.ok(unparsable > 100, `${unparsable} of 2000 mutated statements did not parse (token-level fallback exercised)`);

  // Cut anywhere, even inside a secret literal: what is left of the secret does not survive.
  const withSpans = corpus
    .map((sql) => {
      const r = parser.tryParse(sql);
      return r.ok && r.secrets.length > 0 ? { sql, spans: r.secrets } : undefined;
    })
    .filter((x): x is { sql: string; spans: { start: number; end: number }[] } => x !== undefined);
  fc.assert(
    fc.property(fc.nat({ max: withSpans.length - 1 }), fc.nat(), (i, at) => {
      const { sql, spans } = withSpans[i]!;
      const cut = sql.slice(0, at % (sql.length + 1));
      const redacted = redact(cut, parser);
      for (const { start, end } of spans) {
        if (start >= cut.length) continue;
        const visible = sql.slice(start + 1, Math.min(end - 1, cut.length));
        if (visible.length >= 6 && redacted.includes(visible)) throw new Error(`secret prefix ${JSON.stringify(visible)} survives redact:\n${cut}\n=> ${redacted}`);
      }
      return true;
    }),
    { numRuns: 1000, seed: SEED },
  );
});

t.test('report', async (t) => {
  t.comment(`parsed ${parsed}, rejected ${rejected}; slowest case ${slowest.ms.toFixed(2)} ms of CPU (${slowest.how}): ${JSON.stringify(slowest.sql.slice(0, 200))}`);
  t.ok(parsed + rejected >= 10000, `${parsed + rejected} parser cases`);
  t.ok(slowest.ms < CASE_TIME_LIMIT_MS, 'every case within its time bound');
});
