/**
 * Everything a server instance works with, built once and passed in (`buildServer(state)`).
 * No module-level singletons: tests build many of these in one process.
 */
import { ParseOffload } from '../grammar/parse-offload.js';
import { AuthStateCache } from '../engine/principals/auth-cache.js';
import { resolve } from 'node:path';
import { CatalogService } from '../catalog/rest/service.js';
import { Warnings } from './warnings.js';
import { expireIdempotencyKeys } from '../catalog/rest/idempotency.js';
import type { MetaStore } from '../catalog/store/meta-store.js';
import { LocalFileIO } from '../storage-creds/local-file-io.js';
import { openStore, type StoreLocation } from '../catalog/store/open-store.js';
import { readFileSync } from 'node:fs';
import { bootstrapIfEmpty, type BootstrapOutcome } from '../engine/principals/bootstrap.js';
import { PrincipalMaintenance } from '../engine/principals/maintenance.js';
import { PasswordHasher } from '../engine/principals/passwords.js';
import { openSecretBox, type SecretBox } from '../engine/principals/secret-box.js';
import { WebhookWorker } from '../engine/principals/webhook-worker.js';
import { FailureLimiter } from './auth/failure-limiter.js';
import { KeyRing, type Clock } from './auth/key-ring.js';
import { RefreshTokens } from './auth/refresh-tokens.js';
import { TokenService } from './auth/tokens.js';
import type { FloeConfig } from './config.js';
import { applyOperatorCatalogs, resolveOperatorCatalogs } from './operator-catalogs.js';
import { createMetrics, registerFileCacheMetrics, registerHistoryMetrics, type FloeMetrics } from './metrics.js';
import { Parser } from '../grammar/parser.js';
import { QueryHistory } from '../engine/history/query-history.js';
import { QueryService } from '../engine/session/query-service.js';
import { CatalogStatements } from '../engine/session/catalog-statements.js';
import { QueryRunner } from '../engine/session/query-runner.js';
import { WriteRunner } from '../engine/session/write-runner.js';
import { CopyRunner, ProfilePresigners, StageService, StageStatements, StageUploads, UploadTokens } from '../engine/stages/index.js';
import { PrincipalStatements } from '../engine/session/principal-statements.js';
import { createExecutor, type Executor } from '../engine/exec/index.js';
import { FileCache } from '../engine/exec/file-cache.js';
import { localizingExecutor } from '../engine/exec/localizing-executor.js';
import { WorkloadManager, createWorkloadMetrics, resolveWorkloadConfig, systemClock as wlmSystemClock } from '../engine/wlm/index.js';
import { DEFAULT_FRAGMENT_OPTIONS } from '../engine/planner/index.js';
import type { SystemTableProvider } from '../engine/system/provider.js';
import { NamespacesProvider, TablesProvider } from '../engine/system/catalog-tables.js';
import { ResourceGroupsProvider } from '../engine/system/resource-groups.js';
import { AuditLogProvider } from '../engine/system/audit-log.js';
import { CopyHistoryProvider } from '../engine/stages/copy-history.js';

export interface FloeState {
  readonly config: FloeConfig;
  readonly store: MetaStore;
  readonly clock: Clock;
  readonly keys: KeyRing;
  readonly tokens: TokenService;
  /** Principals' and clients' auth state, cached and kept true by the store's announcements. */
  readonly authStates: AuthStateCache;
  readonly refreshTokens: RefreshTokens;
  readonly failuresByClient: FailureLimiter;
  readonly failuresByAddress: FailureLimiter;
  readonly metrics: FloeMetrics;
  /** The read-through cache of object-store files (stats; `evictAll` for cold-cache measurements). */
  readonly fileCache: FileCache;
  /** SQL → IR, with the statement cache shared by every session of this server. */
  readonly parser: Parser;
  readonly history: QueryHistory;
  /** `POST /api/query`. */
  readonly queries: QueryService;
  /** Stages for bulk loading (statements, COPY INTO and the /v1/stages endpoints). */
  readonly stages: StageService;
  /** Presigned uploads to stages (the /v1/stages endpoints). */
  readonly uploads: StageUploads;
  /** The Iceberg REST catalog (also what the SQL engine commits through). */
  readonly catalog: CatalogService;
  /** Admission, queueing, the MLFQ and the query killer. */
  readonly wlm: WorkloadManager;
  /** The DuckDB worker pool, started on the first query. */
  readonly executor: () => Executor;
  /** System tables by name (`system.<name>` in SQL; the /api endpoints read the same providers). */
  readonly systemTables: ReadonlyMap<string, SystemTableProvider>;
  readonly tables: TablesProvider;
  /** Principal management: the server key box, the webhook worker and the maintenance timers. */
  readonly principals: {
    readonly secrets: SecretBox;
    readonly passwords: PasswordHasher;
    readonly webhookWorker: WebhookWorker;
    readonly maintenance: PrincipalMaintenance;
  };
  /** What the first start created (credentials to print once), or that it had been done before. */
  readonly bootstrap: BootstrapOutcome;
  /** Operator warnings from background parts (the server attaches its logger). */
  readonly warnings: Warnings;
  /** Releases everything the state holds (timers, the store). */
  close(): Promise<void>;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface OpenStateOptions {
  /** Use this store instead of the configured one (tests). It is closed with the state. */
  readonly store?: MetaStore;
  readonly clock?: Clock;
  /** Operator-chosen bootstrap credentials (FLOE_BOOTSTRAP_CLIENT_ID / _SECRET). */
  readonly bootstrapClientId?: string;
  readonly bootstrapClientSecret?: string;
  /** How often the signing-key set is re-read from the store (ms); 0 disables the timer. */
  readonly keyReloadIntervalMs?: number;
}

export function storeLocationOf(config: FloeConfig): StoreLocation {
  return config.store.database_url
    ? { kind: 'postgres', connectionString: config.store.database_url, poolSize: config.store.pool_size }
    : { kind: 'pglite', dataDir: resolve(config.data_dir) };
}

export async function openState(config: FloeConfig, options: OpenStateOptions = {}): Promise<FloeState> {
  const clock = options.clock ?? systemClock;
  const store = options.store ?? await openStore(storeLocationOf(config));
  try {
    // Secret references are read first: a missing one stops the start before anything else runs.
    const operatorCatalogs = resolveOperatorCatalogs(config.catalogs);
    const bootstrap = await bootstrapIfEmpty(store, {
      ...(options.bootstrapClientId ? { clientId: options.bootstrapClientId } : {}),
      ...(options.bootstrapClientSecret ? { clientSecret: options.bootstrapClientSecret } : {}),
    });
    const ttl = config.auth.access_token_ttl_seconds;
    const keys = await KeyRing.open(store, clock, ttl * 1000);
    const authStates = new AuthStateCache(store);
    const tokens = new TokenService(keys, authStates, clock, { issuer: config.auth.issuer, audience: config.auth.audience, accessTokenTtlSeconds: ttl });
    const windowMs = config.auth.rate_limit.window_seconds * 1000;
    const interval = options.keyReloadIntervalMs ?? 30_000;
    const timer = interval > 0 ? setInterval(() => void keys.reload().catch(() => undefined), interval) : undefined;
    timer?.unref();
    const secrets = await openSecretBox(store, config.principals.encryption_key);
    const catalog = new CatalogService({ store, io: new LocalFileIO(), clock, secrets });
    const parser = new Parser({ cacheSize: 2000 });
    const parseOffload = new ParseOffload(parser);
    const catalogStatements = new CatalogStatements(catalog);
    const metrics = createMetrics();
    // The MLFQ runs as many quanta at once as the pool has workers, unless the operator says otherwise.
    const wlmConfig = resolveWorkloadConfig({ ...config.workload, mlfq: { max_concurrent: config.query.workers, ...config.workload.mlfq } });
    const wlm = new WorkloadManager({ config: wlmConfig, clock: wlmSystemClock(), metrics: createWorkloadMetrics(metrics.registry) });
    const dataDir = resolve(config.data_dir);
    const cacheDirectory = config.storage.cache.directory ?? resolve(dataDir, 'cache');
    let executor: Executor | undefined;
    // Started on first use: tests build many servers, and most never run a query.
    const executorOf = (): Executor => (executor ??= createExecutor({
      workers: config.query.workers, threadsPerWorker: config.query.threads_per_worker,
      spillDirectory: config.query.spill_directory ?? resolve(dataDir, 'spill'),
      // Workers read object-store files from their cached copies.
      dataDirectories: [resolve(dataDir, 'warehouse'), resolve(cacheDirectory), ...config.query.data_directories.map((d) => resolve(d))],
      // The workload manager's worker lanes (docs/workload.md): fixed at start, not reloaded.
      backgroundNiceness: wlmConfig.mlfq.backgroundNiceness, interactiveSlots: wlmConfig.mlfq.interactiveSlots,
    }));
    const warehouses = config.query.warehouses;
    const history = new QueryHistory(store, clock, {
      maxPending: config.query.history_max_pending,
      cuPerHour: (w) => (w !== null && Object.hasOwn(warehouses, w) ? warehouses[w]! : warehouses[config.query.default_warehouse]!).cu_per_hour,
    });
    registerHistoryMetrics(metrics.registry, history);
    const tablesProvider = new TablesProvider(catalog);
    const resourceGroups = new ResourceGroupsProvider(wlm);
    const systemTables = new Map<string, SystemTableProvider>([
      [history.name, history], [tablesProvider.name, tablesProvider], ['namespaces', new NamespacesProvider(catalog)], [resourceGroups.name, resourceGroups],
      ['audit_log', new AuditLogProvider(store)], ['copy_history', new CopyHistoryProvider(store)],
    ]);
    // Data files on object storage are read through the local read-through cache (docs/storage.md).
    const warnings = new Warnings();
    const fileCache = new FileCache({
      directory: cacheDirectory, maxBytes: config.storage.cache.max_bytes, concurrency: config.storage.cache.concurrency, verifyVersions: config.storage.cache.verify_etags,
      // Served as the store holds it (docs/storage.md); the location names no credentials.
      onSizeMismatch: (m) => warnings.warn({ location: m.location, manifestBytes: m.manifestBytes, objectBytes: m.objectBytes }, 'data file size differs from its manifest; read as stored'),
    });
    const poolExecutor: Executor = { execute: (p, o) => executorOf().execute(p, o), write: (r, o) => executorOf().write(r, o), writePlan: (p, r, o) => executorOf().writePlan(p, r, o), get stagingDirectory() { return executorOf().stagingDirectory; }, get threads() { return executor?.threads ?? 0; }, close: async () => executor?.close() };
    const queryRunnerExecutor = localizingExecutor(poolExecutor, fileCache);
    registerFileCacheMetrics(metrics.registry, () => fileCache.stats());
    const queryRunner = new QueryRunner({
      catalog, parser, executor: queryRunnerExecutor,
      wlm, systemTables, fragmentOptions: { ...DEFAULT_FRAGMENT_OPTIONS, maxFragmentsPerScan: config.query.workers }, maxResultRows: config.query.max_result_rows,
    });
    const hashing = config.principals.password_hashing;
    const passwords = new PasswordHasher({ isolation: hashing.isolation, workers: hashing.workers, niceness: hashing.niceness, idlePolicy: hashing.idle_policy, maxQueued: hashing.max_queued });
    const principalStatements = new PrincipalStatements({ store, clock, config: config.principals, webhooks: config.webhooks, secrets, passwords });
    const stages = new StageService({ store, catalog, clock });
    const stageStatements = new StageStatements(stages);
    const uploads = new StageUploads(stages, new UploadTokens(secrets.deriveKey('stage-uploads')), {
      maxUploadBytes: config.loading.max_upload_bytes, maxMultipartBytes: config.loading.max_multipart_bytes,
      ttlSeconds: config.loading.presign_ttl_seconds, maxTtlSeconds: config.loading.presign_max_ttl_seconds,
    }, clock, new ProfilePresigners(catalog.deps.secrets));
    const copyRunner = new CopyRunner({ catalog, executor: queryRunnerExecutor, stages, queries: queryRunner, store, clock, maxFileBytes: config.loading.max_file_bytes });
    const writeRunner = new WriteRunner({ catalog, parser, executor: queryRunnerExecutor, queries: queryRunner });
    const queries = new QueryService({
      parser, history, clock, parse: (sql) => parseOffload.tryParse(sql),
      runners: {
        ddl: (ctx, statement) => (statement.kind === 'CreateView' ? writeRunner.run(ctx, statement) : catalogStatements.run(ctx, statement)),
        query: (ctx, statement) => (statement.kind === 'Query' || statement.kind === 'Explain' ? queryRunner.run(ctx, statement)
          : statement.kind === 'CopyInto' ? copyRunner.run(ctx, statement) : writeRunner.run(ctx, statement)),
        principal: (ctx, statement) => principalStatements.run(ctx, statement),
        workload: async () => resourceGroups.show(),
        stage: (ctx, statement) => stageStatements.run(ctx, statement),
        invitation: { historyOwnerOf: (statement) => principalStatements.historyOwnerOf(statement), redeem: (statement) => principalStatements.redeem(statement) },
      },
      defaultCatalog: 'default', defaultSchema: config.query.default_schema,
      maxResultRows: config.query.max_result_rows, maxTimeoutMs: config.query.max_timeout_ms,
      // A bug's details go to the log under a reference the client sees; never the SQL text.
      logBug: (reference, error) => {
        if (config.logging.level === 'silent') return;
        process.stderr.write(`${JSON.stringify({ level: 50, time: Date.now(), msg: 'statement failed with an internal error', reference, err: error instanceof Error ? error.stack : String(error) })}\n`);
      },
    });
    // Declared catalogs first, so a declared `default` is the first start's default catalog.
    await applyOperatorCatalogs(catalog, store, operatorCatalogs);
    if (bootstrap.kind === 'created') await catalog.ensureDefaultCatalog(bootstrap.tenantId, `file://${resolve(config.data_dir, 'warehouse')}`);
    const idempotencyTimer = setInterval(() => void expireIdempotencyKeys(store, clock.now()).catch(() => undefined), 10 * 60_000);
    idempotencyTimer.unref();
    const webhookWorker = new WebhookWorker({ store, clock, config: config.webhooks, secrets, ca: config.webhooks.ca_file ? readFileSync(config.webhooks.ca_file, 'utf8') : undefined });
    const maintenance = new PrincipalMaintenance(store, clock, config.principals);
    if (config.principals.background_jobs) {
      webhookWorker.start();
      maintenance.start();
    }
    return {
      catalog, stages, uploads,
      config, store, clock, keys, tokens, authStates, bootstrap, parser, history, queries, wlm, executor: executorOf, systemTables, tables: tablesProvider,
      principals: { secrets, webhookWorker, maintenance, passwords },
      refreshTokens: new RefreshTokens(store, clock, config.auth.refresh_token_ttl_seconds),
      failuresByClient: new FailureLimiter({ windowMs, maxFailures: config.auth.rate_limit.max_failures_per_client }, clock),
      failuresByAddress: new FailureLimiter({ windowMs, maxFailures: config.auth.rate_limit.max_failures_per_address }, clock),
      metrics, fileCache, warnings,
      async close() {
        if (timer) clearInterval(timer);
        await history.close();
        await executor?.close();
        fileCache.close();
        await parseOffload.close();
        clearInterval(idempotencyTimer);
        maintenance.stop();
        await webhookWorker.stop();
        authStates.close();
        await passwords.close();
        catalog.close();
        uploads.close();
        await store.close();
      },
    };
  } catch (e) {
    await store.close().catch(() => undefined);
    throw e;
  }
}
