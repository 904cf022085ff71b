/**
 * The statement corpus (tests/grammar/corpus/): every valid statement parses and survives the
 * round trip parse(toSql(parse(s))) = parse(s) with spans removed; every invalid one fails with
 * SYNTAX_ERROR 42601 at the recorded line and column with the recorded "expected …". Also: the
 * corpus covers every statement kind of the IR and every principal clause in all three spellings,
 * spans point into the text, and secrets never survive `redact` or reach an error message.
 */
import t from 'tap';
import { isDeepStrictEqual } from 'node:util';
import { createParser, toSql, withoutSpans, redact, printIR, REDACTED, type Statement, type StatementKind } from '../../grammar/index.js';
import { loadInvalidCorpus, loadValidCorpus } from './corpus.js';

const parser = createParser({ cacheSize: 0 });
const valid = loadValidCorpus();
const invalid = loadInvalidCorpus();

t.ok(valid.length >= 300, `at least 300 valid statements (${valid.length})`);
t.ok(invalid.length >= 100, `at least 100 invalid statements (${invalid.length})`);

/** Every statement kind; the type makes a new kind that is missing here fail to compile. */
const ALL_KINDS: Record<StatementKind, true> = {
  Query: true, Explain: true, Insert: true, Update: true, Delete: true, Merge: true, CopyInto: true,
  CreateSchema: true, DropSchema: true, CreateTable: true, CreateTableAs: true, DropTable: true, AlterTable: true,
  CreateView: true, DropView: true, CreateIndex: true, DropIndex: true, ShowCatalogs: true, ShowSchemas: true, ShowTables: true, ShowViews: true,
  DescribeTable: true, Use: true, CreateUser: true, AlterUserSet: true, AlterUserUnset: true, AlterUserSuspend: true,
  AlterUserUnsuspend: true, AlterUserUnlock: true, AlterUserRename: true, AlterUserSetLegalHold: true,
  AlterUserClearLegalHold: true, AlterSelfPassword: true, AlterSelfEnrollMfa: true, AlterSelfVerifyMfa: true,
  AlterSelfDisableMfa: true, DropUser: true, UndropUser: true, ExpungeUser: true, ShowUsers: true, DescribeUser: true,
  RedeemInvitation: true, CreateServiceAccount: true, DropServiceAccount: true, AddKeypair: true, DropKeypair: true,
  ShowServiceAccounts: true, CreatePat: true, DropPat: true, ShowPats: true, CreateWebhook: true, DropWebhook: true,
  ShowWebhooks: true, GrantManage: true, RevokeManage: true, CreateRole: true, DropRole: true, GrantRole: true,
  RevokeRole: true, SetWorkloadClass: true, SetSession: true, ResetSession: true, ShowQueryHistory: true,
  ShowResourceGroups: true, CreateStage: true, DropStage: true, ShowStages: true, ListStage: true, RemoveStage: true,
  GrantStage: true, RevokeStage: true,
};

/** The secret values a statement carries, read from its IR. */
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

t.test('every valid statement parses and round-trips through toSql', async (t) => {
  const kinds = new Set<string>();
  let failures = 0;
  for (const { id, sql } of valid) {
    const r = parser.tryParse(sql);
    if (!r.ok) {
      failures++;
      t.fail(`${id} parses: ${r.error.message}\n${sql}`);
      continue;
    }
    kinds.add(r.statement.kind);
    const text = toSql(r.statement);
    const again = parser.tryParse(text);
    if (!again.ok) {
      failures++;
      t.fail(`${id}: toSql output parses: ${again.error.message}\n${text}`);
      continue;
    }
    if (!isDeepStrictEqual(withoutSpans(again.statement), withoutSpans(r.statement))) {
      failures++;
      t.fail(`${id}: round trip\n${sql}\n=> ${text}\n${printIR(r.statement)}\n${printIR(again.statement)}`);
    }
  }
  t.equal(failures, 0, `${valid.length} valid statements parse and round-trip`);
  const missing = Object.keys(ALL_KINDS).filter((k) => !kinds.has(k));
  t.same(missing, [], 'the corpus has every statement kind');
});

t.test('spans lie inside the statement text', async (t) => {
  let bad = 0;
  for (const { id, sql } of valid) {
    const r = parser.tryParse(sql);
    if (!r.ok) continue;
    const check = (v: unknown, outer: { start: number; end: number }): void => {
      if (Array.isArray(v)) {
        for (const x of v) check(x, outer);
        return;
      }
      if (v === null || typeof v !== 'object') return;
      const node = v as { span?: { start: number; end: number } };
      let inner = outer;
      if (node.span !== undefined) {
        const s = node.span;
        if (!(s.start >= 0 && s.end <= sql.length && s.start <= s.end)) {
          bad++;
          t.fail(`${id}: span ${s.start}-${s.end} outside the text`);
        }
        inner = s;
      }
      for (const [k, x] of Object.entries(node)) if (k !== 'span') check(x, inner);
    };
    check(r.statement, { start: 0, end: sql.length });
    const s = r.statement.span;
    if (sql.slice(s.start, s.end).trim() === '') {
      bad++;
      t.fail(`${id}: empty statement span`);
    }
  }
  t.equal(bad, 0, 'every span is inside its statement');
});

t.test('every invalid statement is a SYNTAX_ERROR at the recorded position', async (t) => {
  let failures = 0;
  for (const { id, sql, line, column, expected } of invalid) {
    const r = parser.tryParse(sql);
    if (r.ok) {
      failures++;
      t.fail(`${id} should not parse:\n${sql}`);
      continue;
    }
    const e = r.error;
    const ok = e.code === 'SYNTAX_ERROR' && e.sqlState === '42601' && e.httpStatus === 400
      && e.params.line === line && e.params.column === column && e.params.expected === expected;
    if (!ok) {
      failures++;
      t.fail(`${id}: got ${e.code} ${e.sqlState} at ${e.params.line}:${e.params.column} expected: ${e.params.expected}; want ${line}:${column} expected: ${expected}\n${sql}`);
    }
    if (!e.message.startsWith(`syntax error at line ${line}, column ${column}: expected `)) {
      failures++;
      t.fail(`${id}: message ${e.message}`);
    }
    t.same(e.toJSON(), { error: 'SYNTAX_ERROR', message: e.message, sql_state: '42601' });
  }
  t.equal(failures, 0, `${invalid.length} invalid statements fail where recorded`);
});

t.test('each principal clause appears as KEY VALUE, KEY = VALUE and KEY=VALUE', async (t) => {
  const text = valid.filter((v) => v.area === 'principals' || v.area === 'workload-session').map((v) => v.sql).join('\n');
  const clauses = [
    'EMAIL', 'PASSWORD', 'DISPLAY_NAME', 'DEFAULT_ROLE', 'DEFAULT_WAREHOUSE', 'MUST_CHANGE_PASSWORD', 'COMMENT',
    'IDENTITY_SOURCE', 'REASON', 'KEY_ID', 'PUBLIC_KEY', 'ALGORITHM', 'TTL', 'SCOPE', 'FOR', 'URL', 'SECRET', 'EVENTS',
    'TOTP', 'CODE', 'INVITATION', 'LIMIT', 'LIKE', 'STATUS',
  ];
  for (const k of clauses) {
    t.match(text, new RegExp(`\\b${k} (?!=)\\S`), `${k} VALUE`);
    t.match(text, new RegExp(`\\b${k} = \\S`), `${k} = VALUE`);
    t.match(text, new RegExp(`\\b${k}=[^=\\s]`), `${k}=VALUE`);
  }
});

t.test('secrets: recorded as secret spans, removed by redact, never in error messages', async (t) => {
  let withSecrets = 0;
  for (const { id, sql } of valid) {
    const r = parser.tryParse(sql);
    if (!r.ok) continue;
    const secrets = secretsOf(r.statement);
    if (secrets.length === 0) {
      t.equal(redact(sql, parser), sql, `${id}: nothing to redact`);
      continue;
    }
    withSecrets++;
    t.equal(r.secrets.length, secrets.length, `${id}: one secret span per secret`);
    const redacted = redact(sql, parser);
    for (const s of secrets) t.notOk(redacted.includes(s), `${id}: ${JSON.stringify(REDACTED)} replaces the secret`);
    const again = parser.tryParse(redacted);
    t.ok(again.ok && again.statement.kind === r.statement.kind, `${id}: the redacted text still parses`);
  }
  t.ok(withSecrets >= 25, `statements with secrets checked (${withSecrets})`);
  for (const { id, sql } of invalid) {
    const r = parser.tryParse(sql);
    if (r.ok) continue;
    for (const m of sql.matchAll(/'((?:[^']|'')*)'/g)) {
      if (m[1]!.length >= 4) t.notOk(r.error.message.includes(m[1]!), `${id}: the error message does not echo a string literal`);
    }
    const redacted = redact(sql, parser);
    for (const m of sql.matchAll(/'((?:[^']|'')*)'/g)) {
      if (m[1]!.length >= 4) t.notOk(redacted.includes(m[1]!), `${id}: the token-level fallback redacts every string literal`);
    }
  }
});

t.test('mistyped secrets are neither echoed in errors nor kept by redact', async (t) => {
  const cases: [string, string][] = [
    ['CREATE USER alice EMAIL \'a@example.com\' PASSWORD "hunter2-dq"', 'hunter2-dq'],
    ['CREATE USER alice EMAIL \'a@example.com\' PASSWORD = hunter2bare', 'hunter2bare'],
    ['ALTER USER SELF VERIFY MFA TOTP 123456', '123456'],
    ['CREATE WEBHOOK w URL \'https://x\' SECRET whsecbare0123456789', 'whsecbare0123456789'],
    ['REDEEM INVITATION inv_bare_token WITH PASSWORD \'p\'', 'inv_bare_token'],
  ];
  for (const [sql, secret] of cases) {
    const r = parser.tryParse(sql);
    t.notOk(r.ok, `${sql} does not parse`);
    if (!r.ok) t.notOk(r.error.message.includes(secret), `the error does not echo it: ${r.error.message}`);
    t.notOk(redact(sql, parser).includes(secret), `redact removes it: ${redact(sql, parser)}`);
  }
});

t.test('the parse cache returns the same result and skips the grammar', async (t) => {
  const cached = createParser({ cacheSize: 16 });
  const sql = valid[0]!.sql;
  const a = cached.tryParse(sql);
  const b = cached.tryParse(sql);
  t.equal(a, b, 'the same result object');
  t.same(cached.cacheStats, { size: 1, hits: 1, misses: 1 });
  const secret = valid.find((v) => v.sql.includes('PASSWORD'))!.sql;
  cached.tryParse(secret);
  cached.tryParse(secret);
  t.equal(cached.cacheStats.hits, 1, 'statements with secrets are never cached');
  const broken = "CREATE USER x PASSWORD 'no-email-so-it-fails'";
  cached.tryParse(broken);
  cached.tryParse(broken);
  t.equal(cached.cacheStats.hits, 1, 'nor are statements that do not parse');
  for (let i = 0; i < 40; i++) cached.tryParse(`SELECT ${i}`);
  t.equal(cached.cacheStats.size, 16, 'the cache is bounded');
});
