/**
 * Floe embedded: `import { Floe } from 'floe'` opens the whole engine in this process (PGlite in
 * memory and a temporary warehouse folder unless told otherwise) and runs SQL as the default
 * tenant's administrator, with the same parser, planner, workers and history as the server.
 *
 *   const floe = await Floe.open();
 *   const r = await floe.sql('SELECT 1 AS one');   // { columns, types, rows, rowCount, … }
 *   await floe.close();
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createExecutor } from './engine/exec/index.js';
import { importDirectory, importFile, withImportExecutor } from './engine/session/import.js';
import { openStore } from './catalog/store/open-store.js';
import type { MetaStore } from './catalog/store/meta-store.js';
import { DEFAULT_CONFIG, loadConfig, validateConfig, type FloeConfig } from './server/config.js';
import { openState, type FloeState } from './server/state.js';
import { loadPrincipalAuthState, TENANT_ADMIN_ROLE } from './engine/principals/principals.js';
import { ALL_SCOPES } from './engine/principals/scopes.js';
import type { QueryAnswer, QueryPrincipal, QueryRequest } from './engine/session/query-service.js';

export { FloeError, isFloeError } from './grammar/errors.js';
export type { QueryAnswer } from './engine/session/query-service.js';

export interface FloeOpenOptions {
  /** Folder for the warehouse (and nothing else); a temporary folder, removed on close, by default. */
  readonly dataDir?: string;
  /** A store to use instead of an in-memory PGlite (closed with Floe). */
  readonly store?: MetaStore;
  /**
   * An operator file to start from, as `floe serve --config` reads it
   * (environment overrides aside); `FLOE_CONFIG` when not given, the defaults without either.
   * Its declared catalogs (`catalogs:`, docs/storage.md) are created or checked as at a server's start.
   */
  readonly configFile?: string;
  /** Adjusts the configuration (the file's or the defaults; data_dir is the warehouse folder, logging silent). */
  readonly config?: (c: FloeConfig) => FloeConfig;
}

export class Floe {
  private constructor(
    /** The engine's state, as a server would hold it: for tests and tools that need more than SQL. */
    readonly state: FloeState,
    private readonly principal: QueryPrincipal,
    private readonly cleanup: () => void,
  ) {}

  static async open(options: FloeOpenOptions = {}): Promise<Floe> {
    const temporary = options.dataDir === undefined;
    const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'floe-embedded-'));
    const file = options.configFile ?? process.env.FLOE_CONFIG;
    const start = file ? loadConfig({ file, env: {} }) : DEFAULT_CONFIG;
    const base: FloeConfig = { ...start, data_dir: dataDir, logging: { level: 'silent' } };
    const config = validateConfig(options.config ? options.config(structuredClone(base)) : base);
    const store = options.store ?? await openStore({ kind: 'pglite-memory' });
    const state = await openState(config, { store, keyReloadIntervalMs: 0 });
    const adminId = state.bootstrap.kind === 'created' ? state.bootstrap.principalId : (await store.query<{ id: string }>(
      `SELECT p.id FROM principals p JOIN principal_roles r ON r.principal_id = p.id
        WHERE p.tenant_id = 'default' AND r.role = $1 AND p.is_bootstrap_principal ORDER BY p.created_at LIMIT 1`, [TENANT_ADMIN_ROLE])).rows[0]?.id;
    const admin = adminId === undefined ? undefined : await loadPrincipalAuthState(store, 'default', adminId);
    if (!admin) {
      await state.close();
      throw new Error('the store has no default-tenant administrator to run SQL as');
    }
    const principal: QueryPrincipal = {
      tenantId: admin.tenantId, principalId: admin.id, name: admin.name, roles: admin.roles, isTenantAdmin: true,
      kind: admin.kind, authMethod: 'client_credentials', scopeClaim: ALL_SCOPES.join(' '),
      amr: ['embedded'], authTime: Math.floor(Date.now() / 1000), defaultWarehouse: null,
    };
    return new Floe(state, principal, () => {
      if (temporary) rmSync(dataDir, { recursive: true, force: true });
    });
  }

  /** Runs one statement; throws `FloeError` (with `code`, `sqlState`, `message`) when it fails. */
  sql(text: string, options: Omit<QueryRequest, 'sql'> = {}): Promise<QueryAnswer> {
    return this.state.queries.execute(this.principal, { ...options, sql: text });
  }

  /**
   * Loads a local file (`.parquet`, `.csv`, `.tbl`) into `table` (`schema.table` or
   * `catalog.schema.table`) with the operator's authority, as `floe admin import` does.
   */
  async import(table: string, file: string): Promise<{ rows: number; created: boolean }> {
    const parts = table.split('.');
    const [catalog, namespace, name] = parts.length === 3 ? [parts[0]!, [parts[1]!], parts[2]!] : parts.length === 2 ? ['default', [parts[0]!], parts[1]!] : [undefined, undefined, undefined];
    if (catalog === undefined || namespace === undefined || name === undefined) throw new Error('table must be schema.table or catalog.schema.table');
    const config = this.state.config;
    const dataDir = resolve(config.data_dir);
    return withImportExecutor(createExecutor, {
      warehouse: resolve(dataDir, 'warehouse'), spill: config.query.spill_directory ?? resolve(dataDir, 'spill'), extra: config.query.data_directories,
    }, importDirectory(file), (executor) => importFile({ catalog: this.state.catalog, executor }, {
      context: { tenantId: this.principal.tenantId, principalId: this.principal.principalId, roles: this.principal.roles },
      catalog, namespace, table: name, file,
    }));
  }

  async close(): Promise<void> {
    await this.state.close();
    this.cleanup();
  }
}
