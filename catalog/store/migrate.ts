/**
 * Versioned plain-SQL migrations (`migrations/NNNN_name.sql`), applied at startup in one
 * transaction that holds an advisory lock, so replicas starting together apply each file once.
 * PostgreSQL DDL is transactional: a failing migration leaves the store as it was.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { MetaStore } from './meta-store.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Advisory lock key of the migration runner ("floe.migrate" as a stable 63-bit number). */
const MIGRATION_LOCK_KEY = 7_310_581_144_502_271n;

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * Reads the migration files in version order; a duplicate version is a build bug. Gaps are
 * allowed: features built side by side reserve their numbers, and `migrate` applies every version
 * not yet recorded, so one that lands after a higher number is still applied.
 */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  let previous = 0;
  return files.map((file) => {
    const version = Number(file.slice(0, 4));
    if (version <= previous) throw new Error(`migration ${file}: version ${version} is not above ${previous}`);
    previous = version;
    return { version, name: file.slice(5, -4), sql: readFileSync(`${dir}/${file}`, 'utf8') };
  });
}

export interface MigrationReport {
  readonly applied: readonly number[];
  readonly current: number;
}

/** Applies every migration not yet recorded in `schema_migrations`. */
export async function migrate(store: Pick<MetaStore, 'transaction'>, migrations: readonly Migration[] = loadMigrations()): Promise<MigrationReport> {
  return store.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      // Statement by statement: PGlite's transaction handle runs one statement per query call.
      await execScript(tx, m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    const current = Math.max(0, ...done, ...applied);
    return { applied, current };
  });
}

async function execScript(tx: { query: MetaStore['query'] }, sql: string): Promise<void> {
  for (const statement of splitStatements(sql)) await tx.query(statement);
}

/**
 * Splits SQL text into statements at top-level semicolons, skipping those inside quotes,
 * comments and dollar-quoted bodies (partition-maintenance functions are written with `$$`).
 */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const close = sql.indexOf(c, i + 1);
      i = close < 0 ? sql.length : close + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? sql.length : nl + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close < 0 ? sql.length : close + 2;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        i = close < 0 ? sql.length : close + tag[0].length;
      } else i++;
    } else if (c === ';') {
      push(sql.slice(start, i));
      start = ++i;
    } else i++;
  }
  push(sql.slice(start));
  return out;

  function push(s: string): void {
    const body = s.replace(/^\s*(--[^\n]*\n\s*)*/g, '').trim();
    if (body.length > 0) out.push(s.trim());
  }
}
