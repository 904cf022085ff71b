#!/usr/bin/env node
/**
 * The `floe` command: `floe serve` runs the server; `floe admin …` are the operator's commands,
 * which work on the metadata store directly with the operator's authority.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../catalog/store/open-store.js';
import type { MetaStore } from '../catalog/store/meta-store.js';
import { ClientError, createClient, revokeClient, rotateClient } from '../engine/principals/clients.js';
import { createTenantWithAdmin } from '../engine/principals/bootstrap.js';
import { findPrincipalByName } from '../engine/principals/principals.js';
import { findTenant, TenantError } from '../engine/principals/tenants.js';
import { replayFailedDeliveries } from '../engine/principals/webhook-worker.js';
import { isProvisionedSignIn, setProvisioningPolicy } from '../engine/principals/provisioning-policy.js';
import { createScimToken, describeScimToken, revokeScimToken, rotateScimToken, ScimTokenError } from '../engine/scim/token.js';
import { DEFAULT_PASSWORD_POLICY, loadPasswordPolicy, setPasswordPolicy } from '../engine/principals/passwords.js';
import type { Server as HttpsServer } from 'node:https';
import { buildManagementServer, buildServer } from './app.js';
import { readTlsMaterial, reloadTls } from './tls.js';
import { unreachable } from '../grammar/ir.js';
import { KeyRing } from './auth/key-ring.js';
import { ConfigError, loadConfig, type FloeConfig } from './config.js';
import { openState, storeLocationOf, type FloeState } from './state.js';
import { createExecutor } from '../engine/exec/index.js';
import { isFloeError } from '../grammar/errors.js';
import { importDirectory, importFile, withImportExecutor } from '../engine/session/import.js';
import { CatalogError } from '../catalog/rest/errors.js';
import { findOrphans } from '../catalog/rest/orphans.js';
import { parseJson } from '../catalog/iceberg/json.js';
import { parseStorageProfile } from '../catalog/rest/wire.js';
import { warehouseLocationOf } from '../storage-creds/storage-profile.js';
import { ShellUsageError, sqlShell } from './sql-shell.js';

const USAGE = `usage:
  floe serve [--port N] [--host H] [--data-dir D] [--config F]
  floe sql [--url URL] [--profile P | --client-id ID --client-secret S | --token T] [--format table|csv|json] [-c SQL] [-f FILE]
  floe admin create-tenant <tenant-id> [--display-name NAME]
  floe admin create-client --tenant T --principal NAME [--scope "s1 s2"]
  floe admin rotate-client <client-id>
  floe admin revoke-client <client-id>
  floe admin rotate-signing-key
  floe admin create-catalog <name> [--tenant T] [--warehouse LOCATION] [--storage-profile FILE.json]
  floe admin orphans <catalog> [--tenant T] [--older-than-minutes N]   (lists files no snapshot refers to; deletes nothing)
  floe admin import --table [catalog.]schema.table [--tenant T] <file.parquet|.csv|.tbl>
  floe admin webhooks replay [--tenant T] [--delivery ID] [--event ID]
  floe admin scim-token create|rotate|revoke|show --tenant T
  floe admin scim-sign-in --tenant T --methods password,pat|none
  floe admin set-password-policy --tenant T [--min-length N] [--min-classes N] [--history N]
        [--allow-username] [--allow-common] [--require-mfa]
Every admin command also takes --config F and --data-dir D.`;

class UsageError extends Error {}
/** A command whose input the catalog refused (bad profile, taken name): exit 2, no usage text. */
class RefusedError extends Error {}

const COMMON_OPTIONS = {
  config: { type: 'string' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function configFrom(values: { config?: string | undefined; 'data-dir'?: string | undefined }, extra: Record<string, unknown> = {}): FloeConfig {
  const overrides: Record<string, unknown> = { ...extra };
  if (values['data-dir']) overrides.data_dir = values['data-dir'];
  return loadConfig({ ...(values.config ? { file: values.config } : {}), overrides: overrides as never });
}

/** With PGlite only one process may open the data directory; the server marks it with a pid file. */
function pidFile(config: FloeConfig): string {
  return join(resolve(config.data_dir), 'floe.pid');
}

function runningServerPid(config: FloeConfig): number | undefined {
  const file = pidFile(config);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { ...COMMON_OPTIONS, port: { type: 'string' }, host: { type: 'string' } } });
  if (values.help) return void console.log(USAGE);
  const server: Record<string, unknown> = {};
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port)) throw new UsageError(`--port must be a number, got ${values.port}`);
    server.port = Number(values.port);
  }
  if (values.host !== undefined) server.host = values.host;
  const config = configFrom(values, Object.keys(server).length ? { server } : {});
  // A missing or mismatched certificate stops the start before the store is opened.
  if (config.server.tls) readTlsMaterial(config.server.tls);
  const embedded = config.store.database_url === null;
  if (embedded) {
    const other = runningServerPid(config);
    if (other) throw new UsageError(`another Floe server (pid ${other}) is using ${resolve(config.data_dir)}`);
    mkdirSync(resolve(config.data_dir), { recursive: true });
    writeFileSync(pidFile(config), String(process.pid));
  }
  const state = await openState(config, {
    ...(process.env.FLOE_BOOTSTRAP_CLIENT_ID ? { bootstrapClientId: process.env.FLOE_BOOTSTRAP_CLIENT_ID } : {}),
    ...(process.env.FLOE_BOOTSTRAP_CLIENT_SECRET ? { bootstrapClientSecret: process.env.FLOE_BOOTSTRAP_CLIENT_SECRET } : {}),
  });
  const app = await buildServer(state);
  const management = config.management ? await buildManagementServer(state) : undefined;
  const address = await app.listen({ host: config.server.host, port: config.server.port });
  // The management listener's real address (port 0 picks a free one, as for the main listener).
  const managementAddress = management && config.management ? await management.listen({ host: config.management.host, port: config.management.port }) : undefined;

  const where = embedded ? `PGlite in ${resolve(config.data_dir)}` : 'PostgreSQL';
  const lines = [`Floe is serving on ${address} (metadata store: ${where})`];
  if (managementAddress) lines.push(`Management listener (health, metrics) on ${managementAddress}`);
  if (state.bootstrap.kind === 'created') {
    lines.push(
      '',
      `Bootstrap administrator created for tenant "${state.bootstrap.tenantId}".`,
      'Its client secret is shown only this once; keep it safe:',
      `  export FLOE_CLIENT_ID=${state.bootstrap.credentials.clientId}`,
      `  export FLOE_CLIENT_SECRET=${state.bootstrap.credentials.clientSecret}`,
      '',
    );
  }
  process.stdout.write(lines.join('\n') + '\n');

  // Stopping: the listener stops taking requests (503 meanwhile), statements already admitted get
  // `server.shutdown_grace_ms` to finish, then what is left is cancelled with SERVER_SHUTDOWN (each
  // recorded in history, each client answered) so that closing does not wait for a long query's
  // own timeout. A second signal cancels at once.
  let closing = false;
  const shutdown = async (): Promise<void> => {
    if (closing) {
      state.wlm.cancelAll();
      return;
    }
    closing = true;
    const cancelRest = setTimeout(() => state.wlm.cancelAll(), config.server.shutdown_grace_ms);
    // A keep-alive connection that was busy when closing began would otherwise hold `close()` for
    // the whole keep-alive timeout (72 s) after its answer: close such connections as they go idle.
    const closeIdle = setInterval(() => app.server.closeIdleConnections(), 100);
    await app.close();
    clearTimeout(cancelRest);
    clearInterval(closeIdle);
    await management?.close();
    await state.close();
    if (embedded) rmSync(pidFile(config), { force: true });
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
  // SIGHUP rereads the certificate and key (a renewal) without closing the listener; without
  // `server.tls` it only says so, rather than ending the process as the default action would.
  process.on('SIGHUP', () => {
    const outcome = reloadTls(app.server as unknown as HttpsServer, config.server.tls);
    switch (outcome.kind) {
      case 'reloaded': app.log.info({ fingerprint256: outcome.fingerprint256 }, 'TLS certificate reloaded'); break;
      case 'kept': app.log.error(`TLS certificate not reloaded, the previous one is still served: ${outcome.reason}`); break;
      case 'not-configured': app.log.info('SIGHUP: no server.tls configured, nothing to reload'); break;
      default: unreachable(outcome);
    }
  });
}

/** Refuses to open the embedded store while a server holds it (PGlite has one owner at a time). */
function assertStoreFree(config: FloeConfig): void {
  if (config.store.database_url !== null) return;
  const other = runningServerPid(config);
  if (other) throw new UsageError(`the embedded store in ${resolve(config.data_dir)} is in use by a running server (pid ${other}); stop it first, or run Floe on PostgreSQL`);
}

/** The whole state opened offline (no background jobs), acting as the tenant's administrator "admin". */
async function withAdminState<T>(
  values: { config?: string | undefined; 'data-dir'?: string | undefined }, tenant: string,
  fn: (state: FloeState, admin: { tenantId: string; principalId: string; roles: string[] }, config: FloeConfig) => Promise<T>,
): Promise<T> {
  const config = configFrom(values);
  assertStoreFree(config);
  const state = await openState({ ...config, principals: { ...config.principals, background_jobs: false } }, { keyReloadIntervalMs: 0 });
  try {
    const admin = await findPrincipalByName(state.store, tenant, 'admin');
    if (!admin || !admin.roles.includes('tenant_admin')) throw new UsageError(`tenant ${tenant} has no administrator "admin"`);
    return await fn(state, { tenantId: tenant, principalId: admin.id, roles: [...admin.roles] }, config);
  } finally {
    await state.close();
  }
}

async function withAdminStore<T>(values: { config?: string | undefined; 'data-dir'?: string | undefined }, fn: (store: MetaStore) => Promise<T>): Promise<T> {
  const config = configFrom(values);
  assertStoreFree(config);
  const store = await openStore(storeLocationOf(config));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function printCredentials(what: string, c: { clientId: string; clientSecret: string }): void {
  console.log(`${what}. The client secret is shown only this once:`);
  console.log(`  client_id:     ${c.clientId}`);
  console.log(`  client_secret: ${c.clientSecret}`);
}

async function admin(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'create-tenant': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...COMMON_OPTIONS, 'display-name': { type: 'string' } } });
      const id = positionals[0];
      if (!id || positionals.length > 1) throw new UsageError('create-tenant takes one tenant id');
      const created = await withAdminStore(values, (store) => createTenantWithAdmin(store, id, values['display-name']));
      printCredentials(`Tenant ${id} created with administrator "admin"`, created.credentials);
      return;
    }
    case 'create-client': {
      const { values } = parseArgs({ args: rest, options: { ...COMMON_OPTIONS, tenant: { type: 'string' }, principal: { type: 'string' }, scope: { type: 'string' } } });
      if (!values.tenant || !values.principal) throw new UsageError('create-client needs --tenant and --principal');
      const tenant = values.tenant;
      const principalName = values.principal;
      const creds = await withAdminStore(values, async (store) => {
        const principal = await findPrincipalByName(store, tenant, principalName);
        if (!principal) throw new UsageError(`no principal ${principalName} in tenant ${tenant}`);
        return createClient(store, { tenantId: tenant, principalId: principal.id, ...(values.scope ? { scopes: values.scope.split(/\s+/).filter(Boolean) } : {}) });
      });
      printCredentials(`Client created for ${principalName} in tenant ${tenant}`, creds);
      return;
    }
    case 'rotate-client':
    case 'revoke-client': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: COMMON_OPTIONS });
      const clientId = positionals[0];
      if (!clientId || positionals.length > 1) throw new UsageError(`${command} takes one client id`);
      if (command === 'rotate-client') {
        printCredentials(`Client ${clientId} rotated; the previous secret no longer works`, await withAdminStore(values, (store) => rotateClient(store, clientId)));
      } else {
        await withAdminStore(values, (store) => revokeClient(store, clientId));
        console.log(`Client ${clientId} revoked.`);
      }
      return;
    }
    case 'rotate-signing-key': {
      const { values } = parseArgs({ args: rest, options: COMMON_OPTIONS });
      const kid = await withAdminStore(values, (store) => KeyRing.rotate(store));
      console.log(`New signing key ${kid} is active; earlier keys verify until their tokens expire.`);
      return;
    }
    case 'webhooks': {
      const [sub, ...args] = rest;
      if (sub !== 'replay') throw new UsageError('webhooks takes the subcommand replay');
      const { values } = parseArgs({ args, options: { ...COMMON_OPTIONS, tenant: { type: 'string' }, delivery: { type: 'string' }, event: { type: 'string' } } });
      const n = await withAdminStore(values, (store) => replayFailedDeliveries(store, { now: () => Date.now() }, {
        ...(values.tenant ? { tenantId: values.tenant } : {}), ...(values.delivery ? { deliveryId: values.delivery } : {}), ...(values.event ? { eventId: values.event } : {}),
      }));
      console.log(`${n} failed webhook deliveries set back to pending; the worker retries them within its interval.`);
      return;
    }
    case 'scim-token': {
      const [sub, ...args] = rest;
      if (sub !== 'create' && sub !== 'rotate' && sub !== 'revoke' && sub !== 'show') throw new UsageError('scim-token takes create, rotate, revoke or show');
      const { values } = parseArgs({ args, options: { ...COMMON_OPTIONS, tenant: { type: 'string' } } });
      if (!values.tenant) throw new UsageError(`scim-token ${sub} needs --tenant`);
      const tenant = values.tenant;
      const now = new Date();
      switch (sub) {
        case 'create':
        case 'rotate': {
          const issued = await withAdminStore(values, (store) => sub === 'create' ? createScimToken(store, tenant, now) : rotateScimToken(store, tenant, now));
          console.log(`SCIM token ${sub === 'create' ? 'created' : 'rotated (the previous one no longer works)'} for tenant ${tenant}. It is shown only this once:`);
          console.log(`  scim_base_url: <this server's address>/scim/v2`);
          console.log(`  scim_token:    ${issued.token}`);
          return;
        }
        case 'revoke':
          await withAdminStore(values, (store) => revokeScimToken(store, tenant, now));
          console.log(`SCIM token of tenant ${tenant} revoked; provisioning stops until a new one is created.`);
          return;
        case 'show': {
          const live = await withAdminStore(values, (store) => describeScimToken(store, tenant));
          console.log(live ? `tenant ${tenant}: SCIM token ${live.prefix}… created ${live.createdAt.toISOString()}, last used ${live.lastUsedAt?.toISOString() ?? 'never'}` : `tenant ${tenant} has no live SCIM token`);
          return;
        }
        default:
          return unreachable(sub);
      }
    }
    case 'scim-sign-in': {
      const { values } = parseArgs({ args: rest, options: { ...COMMON_OPTIONS, tenant: { type: 'string' }, methods: { type: 'string' } } });
      if (!values.tenant || values.methods === undefined) throw new UsageError('scim-sign-in needs --tenant and --methods (password, pat, both comma-separated, or none)');
      const words = values.methods.trim().toLowerCase() === 'none' ? [] : values.methods.split(',').map((w) => w.trim().toLowerCase()).filter(Boolean);
      const bad = words.filter((w) => !isProvisionedSignIn(w));
      if (bad.length > 0 || (words.length === 0 && values.methods.trim().toLowerCase() !== 'none')) throw new UsageError(`--methods takes password, pat (comma-separated) or none; not ${bad.join(', ') || JSON.stringify(values.methods)}`);
      const tenant = values.tenant;
      const change = await withAdminStore(values, async (store) => {
        if (!await findTenant(store, tenant)) throw new UsageError(`no tenant ${tenant}`);
        return setProvisioningPolicy(store, tenant, words.filter(isProvisionedSignIn), new Date());
      });
      console.log(`Provisioned users of tenant ${tenant} may sign in with: ${change.methods.join(', ') || 'nothing Floe issues'}.`
        + (change.sessionsEnded > 0 || change.patsRevoked > 0 ? ` Ended the sessions of ${change.sessionsEnded} provisioned users and revoked ${change.patsRevoked} of their personal access tokens.` : ''));
      return;
    }
    case 'set-password-policy': {
      const { values } = parseArgs({ args: rest, options: {
        ...COMMON_OPTIONS, tenant: { type: 'string' }, 'min-length': { type: 'string' }, 'min-classes': { type: 'string' }, history: { type: 'string' },
        'allow-username': { type: 'boolean' }, 'allow-common': { type: 'boolean' }, 'require-mfa': { type: 'boolean' },
      } });
      if (!values.tenant) throw new UsageError('set-password-policy needs --tenant');
      const tenant = values.tenant;
      const int = (v: string | undefined, name: string, min: number, max: number): number | undefined => {
        if (v === undefined) return undefined;
        if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
        return Number(v);
      };
      const minLength = int(values['min-length'], 'min-length', 1, 1024);
      const minClasses = int(values['min-classes'], 'min-classes', 0, 4);
      const history = int(values.history, 'history', 0, 100);
      const policy = await withAdminStore(values, async (store) => {
        if (!await findTenant(store, tenant)) throw new UsageError(`no tenant ${tenant}`);
        const current = await loadPasswordPolicy(store, tenant).catch(() => DEFAULT_PASSWORD_POLICY);
        const next = {
          minLength: minLength ?? current.minLength,
          minClasses: minClasses ?? current.minClasses,
          historyCount: history ?? current.historyCount,
          disallowUsername: values['allow-username'] ? false : current.disallowUsername,
          refuseCommon: values['allow-common'] ? false : current.refuseCommon,
          requireMfa: values['require-mfa'] ?? current.requireMfa,
        };
        await setPasswordPolicy(store, tenant, next);
        return next;
      });
      console.log(`Password policy of tenant ${tenant}: ${JSON.stringify(policy)}`);
      return;
    }
    case 'create-catalog': {
      // The profile comes from a file (the `storage-profile` object of POST /v1/catalogs), so its
      // keys never appear on a command line; they are sealed like the REST route seals them.
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...COMMON_OPTIONS, tenant: { type: 'string' }, warehouse: { type: 'string' }, 'storage-profile': { type: 'string' } } });
      const name = positionals[0];
      if (!name || positionals.length > 1) throw new UsageError('create-catalog takes one catalog name');
      if (!values.warehouse && !values['storage-profile']) throw new UsageError('create-catalog needs --warehouse or --storage-profile');
      let storage: ReturnType<typeof parseStorageProfile> | undefined;
      if (values['storage-profile']) {
        let text: string;
        try {
          text = readFileSync(values['storage-profile'], 'utf8');
        } catch (e) {
          throw new UsageError(`cannot read ${values['storage-profile']}: ${(e as Error).message}`);
        }
        try {
          storage = parseStorageProfile(parseJson(text));
        } catch (e) {
          throw new RefusedError(e instanceof CatalogError ? e.message : `${values['storage-profile']} is not JSON`);
        }
      }
      const tenant = values.tenant ?? 'default';
      await withAdminState(values, tenant, async (state, admin, config) => {
        const warehouseLocation = values.warehouse ?? (storage !== undefined ? warehouseLocationOf(storage.profile) : '');
        const created = await state.catalog.createCatalog(admin, {
          name, warehouseLocation, ...(storage !== undefined ? { storage } : {}),
        }).catch((e: unknown) => {
          throw e instanceof CatalogError ? new RefusedError(e.message) : e;
        });
        console.log(`Catalog ${created.name} created in tenant ${tenant}: ${created.warehouseLocation}${created.storageProfile !== null ? ' (storage profile checked)' : ''}.`);
      });
      return;
    }
    case 'orphans': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...COMMON_OPTIONS, tenant: { type: 'string' }, 'older-than-minutes': { type: 'string' } } });
      const name = positionals[0];
      if (!name || positionals.length > 1) throw new UsageError('orphans takes one catalog name');
      const minutes = values['older-than-minutes'] === undefined ? undefined : Number(values['older-than-minutes']);
      if (minutes !== undefined && !(Number.isFinite(minutes) && minutes >= 0)) throw new UsageError('--older-than-minutes must be a number of minutes, 0 or more');
      const tenant = values.tenant ?? 'default';
      await withAdminState(values, tenant, async (state, admin, config) => {
        const report = await findOrphans(state.catalog, admin, name, {
          ...(minutes !== undefined ? { olderThanMs: Date.now() - minutes * 60_000 } : {}),
        }).catch((e: unknown) => {
          throw e instanceof CatalogError ? new RefusedError(e.message) : e;
        });
        // One line per file (location, bytes, last modified, table): easy to cut and feed to a delete.
        for (const o of report.orphans) console.log(`${o.location}\t${o.size}\t${new Date(o.lastModifiedMs).toISOString()}\t${o.table}`);
        const bytes = report.orphans.reduce((n, o) => n + o.size, 0);
        console.error(`${report.orphans.length} orphan files (${bytes} bytes) among ${report.filesListed} files under ${report.tables} tables of catalog ${name}; nothing was deleted.`);
      });
      return;
    }
    case 'import': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...COMMON_OPTIONS, table: { type: 'string' }, tenant: { type: 'string' } } });
      const file = positionals[0];
      if (!values.table || !file || positionals.length > 1) throw new UsageError('import needs --table [catalog.]schema.table and one file');
      const parts = values.table.split('.');
      if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) throw new UsageError('--table must be schema.table or catalog.schema.table');
      const [catalog, schema, table] = parts.length === 3 ? [parts[0]!, parts[1]!, parts[2]!] : ['default', parts[0]!, parts[1]!];
      const tenant = values.tenant ?? 'default';
      await withAdminState(values, tenant, async (state, admin, config) => {
        const dataDir = resolve(config.data_dir);
        const started = Date.now();
        const result = await withImportExecutor(createExecutor, {
          warehouse: resolve(dataDir, 'warehouse'), spill: config.query.spill_directory ?? resolve(dataDir, 'spill'), extra: config.query.data_directories,
        }, importDirectory(file), (executor) => importFile({ catalog: state.catalog, executor }, {
          context: admin, catalog, namespace: [schema], table, file,
        }));
        console.log(`${result.created ? 'Created' : 'Loaded'} ${catalog}.${schema}.${table}: ${result.rows} rows in ${Date.now() - started} ms.`);
      });
      return;
    }
    default:
      throw new UsageError(command ? `unknown admin command ${command}` : 'admin needs a command');
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'admin':
      return admin(rest);
    case 'sql': {
      const code = await sqlShell(rest);
      if (code !== 0) process.exit(code);
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof UsageError || e instanceof RefusedError || e instanceof ShellUsageError || e instanceof ConfigError || e instanceof ClientError || e instanceof TenantError || e instanceof ScimTokenError) {
    console.error(`floe: ${e.message}`);
    if (e instanceof UsageError) console.error(USAGE);
    process.exit(2);
  }
  if (isFloeError(e)) {
    console.error(`floe: ${e.message}`);
    process.exit(1);
  }
  if (e instanceof Error && 'code' in e && (e as NodeJS.ErrnoException).code === 'EADDRINUSE') {
    console.error(`floe: ${e.message}`);
    process.exit(1);
  }
  console.error('floe: failed:', e);
  process.exit(1);
});
