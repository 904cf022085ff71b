/**
 * Operator configuration: one file (JSON or YAML) plus `FLOE_*` environment overrides, validated
 * at startup against one JSON Schema. A bad key or value stops the start with a message naming it.
 * Keys are snake_case like the service spec's resource-group properties.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_WORKLOAD_SPEC, WORKLOAD_CONFIG_SCHEMA, WORKLOAD_SCHEMA_DEFS, WorkloadConfigError, resolveWorkloadConfig, type WorkloadConfigSpec } from '../engine/wlm/config.js';
import { DEFAULT_PRINCIPALS_CONFIG, DEFAULT_WEBHOOKS_CONFIG, type PrincipalsConfig, type WebhooksConfig } from '../engine/principals/settings.js';

export interface ListenConfig {
  readonly host: string;
  readonly port: number;
}

/** Where the main listener's certificate chain and private key are (PEM files). */
export interface TlsFilesConfig {
  readonly cert_file: string;
  readonly key_file: string;
}

export interface FloeConfig {
  readonly server: ListenConfig & {
    /** Largest request body accepted, bytes. */
    readonly body_limit_bytes: number;
    /** Honour X-Forwarded-For for the client address (rate limits) when behind a proxy. */
    readonly trust_proxy: boolean;
    /**
     * On SIGTERM/SIGINT, how long queued and running statements may still finish (ms) before they
     * are cancelled with SERVER_SHUTDOWN; new requests get 503 meanwhile. A second signal cancels at once.
     */
    readonly shutdown_grace_ms: number;
    /**
     * HTTPS of the main listener (server/tls.ts): PEM certificate chain and private key, read at
     * start and again on SIGHUP. Null serves plain HTTP.
     */
    readonly tls: TlsFilesConfig | null;
  };
  /** Optional second listener serving /health, /health/ready and /metrics without a token. */
  readonly management: ListenConfig | null;
  /** Folder of the embedded store and the default warehouse. */
  readonly data_dir: string;
  readonly store: {
    /** PostgreSQL connection string; null selects embedded PGlite under data_dir. */
    readonly database_url: string | null;
    readonly pool_size: number;
  };
  readonly auth: {
    readonly issuer: string;
    readonly audience: string;
    readonly access_token_ttl_seconds: number;
    readonly refresh_token_ttl_seconds: number;
    readonly rate_limit: {
      readonly window_seconds: number;
      readonly max_failures_per_client: number;
      readonly max_failures_per_address: number;
    };
  };
  readonly logging: {
    readonly level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  };
  /** The query interface (`/api/query`). */
  readonly query: {
    /** Schema of unqualified table names when the request and session name none. */
    readonly default_schema: string;
    /** Largest result in rows; a bigger one fails with RESULT_TOO_LARGE instead of being cut. */
    readonly max_result_rows: number;
    /** Largest `timeout_ms` a request may ask for. */
    readonly max_timeout_ms: number;
    /** History records not yet in the store past which new statements are refused with 503. */
    readonly history_max_pending: number;
    /** Warehouse of principals that name none; its CU rate prices their queries. */
    readonly default_warehouse: string;
    /** Warehouses by name with their compute-unit rate per hour of execution (history's cu_consumed). */
    readonly warehouses: Readonly<Record<string, { readonly cu_per_hour: number }>>;
    /** DuckDB worker threads (each one DuckDB instance with its own memory limit and spill folder). */
    readonly workers: number;
    /** DuckDB threads inside each worker. */
    readonly threads_per_worker: number;
    /** Local folders besides the warehouse that workers may read (tables registered from elsewhere). */
    readonly data_directories: readonly string[];
    /** Spill folder of the workers; `<data_dir>/spill` when null. */
    readonly spill_directory: string | null;
  };
  /** Resource groups, routing rules, workload classes and the MLFQ (engine/wlm/config.ts, docs/workload.md). */
  readonly workload: WorkloadConfigSpec;
  /** Principal management (engine/principals/settings.ts documents each key). */
  readonly principals: PrincipalsConfig;
  /** Webhook delivery worker. */
  readonly webhooks: WebhooksConfig;
  /** Object storage as the engine reads it. */
  readonly storage: {
    /** The read-through cache of object-store data files (engine/exec/file-cache.ts). */
    readonly cache: {
      /** Most bytes the cache holds on local disk, fetches in flight included. */
      readonly max_bytes: number;
      /** Its folder; `<data_dir>/cache` when null. Emptied at start. */
      readonly directory: string | null;
      /** Most object fetches in flight. */
      readonly concurrency: number;
      /**
       * Check a cached copy's ETag against the object (one HEAD per file per statement, sent
       * while the statement runs; its rows wait for the answer), so a file rewritten in place is
       * never served stale. Off trusts Iceberg's never-rewrite rule and the manifest's size alone.
       */
      readonly verify_etags: boolean;
    };
    /** Credential vending (docs/vending.md). */
    readonly vending: {
      /**
       * Share and reuse minted sessions per (table locations, mode) until close to expiry. Off
       * mints one per request (an STS call per vended load): for measuring, not for production.
       */
      readonly cache_sessions: boolean;
    };
  };
  /**
   * Catalogs the operator declares (docs/storage.md, server/operator-catalogs.ts): created at start
   * when missing, their storage checked with the same probe as `POST /v1/catalogs` when present.
   * Keys are never written here: a profile's secret fields name an environment variable or a file.
   */
  readonly catalogs: readonly OperatorCatalogConfig[];
  /** Bulk loading: stages, uploads and COPY INTO (docs/loading.md). */
  readonly loading: {
    /** Largest file COPY INTO loads; a larger one is refused (LOAD_FILE_TOO_LARGE). */
    readonly max_file_bytes: number;
    /** Largest single presigned upload (one PUT, or one part of a multipart upload). */
    readonly max_upload_bytes: number;
    /** Largest file a multipart upload may assemble. */
    readonly max_multipart_bytes: number;
    /** How long a presigned URL is valid when the request names no expiry, and the longest it may ask. */
    readonly presign_ttl_seconds: number;
    readonly presign_max_ttl_seconds: number;
  };
}

/** Where a secret of an operator-declared profile is read from at start: never the file itself. */
export type SecretReference = { readonly env: string } | { readonly file: string };

/** One catalog in the operator file's `catalogs` list. */
export interface OperatorCatalogConfig {
  readonly name: string;
  /** The tenant owning it (default `default`); it must exist. */
  readonly tenant?: string;
  /** Defaults to the profile's bucket and prefix; required without a profile. */
  readonly warehouse_location?: string;
  readonly location_mappings?: readonly { readonly from: string; readonly to: string }[];
  /**
   * The `storage-profile` object of `POST /v1/catalogs` (its kebab-case keys), except that
   * `credentials` secrets (`secret-access-key`, `session-token`, and optionally `access-key-id`)
   * are `{env: NAME}` or `{file: PATH}` references.
   */
  readonly storage_profile?: { readonly [key: string]: unknown };
}

export const DEFAULT_CONFIG: FloeConfig = {
  server: { host: '127.0.0.1', port: 8181, body_limit_bytes: 10 * 1024 * 1024, trust_proxy: false, shutdown_grace_ms: 10_000, tls: null },
  management: null,
  data_dir: './floe-data',
  store: { database_url: null, pool_size: 10 },
  auth: {
    issuer: 'floe',
    audience: 'floe',
    access_token_ttl_seconds: 3600,
    refresh_token_ttl_seconds: 30 * 24 * 3600,
    rate_limit: { window_seconds: 60, max_failures_per_client: 10, max_failures_per_address: 50 },
  },
  logging: { level: 'info' },
  query: {
    default_schema: 'default',
    max_result_rows: 100_000,
    max_timeout_ms: 3_600_000,
    history_max_pending: 100_000,
    default_warehouse: 'default',
    warehouses: { default: { cu_per_hour: 1 } },
    workers: 2,
    // A query that runs alone (most of TPC-H is one fragment) should have every core; several
    // running at once share them through the OS. One thread per worker left half of a 2-core
    // machine idle on single-fragment queries (docs/performance.md).
    threads_per_worker: Math.max(1, Math.min(16, availableParallelism())),
    data_directories: [],
    spill_directory: null,
  },
  workload: DEFAULT_WORKLOAD_SPEC,
  principals: DEFAULT_PRINCIPALS_CONFIG,
  webhooks: DEFAULT_WEBHOOKS_CONFIG,
  storage: { cache: { max_bytes: 4 * 1024 ** 3, directory: null, concurrency: 16, verify_etags: true }, vending: { cache_sessions: true } },
  catalogs: [],
  loading: { max_file_bytes: 5 * 1024 ** 3, max_upload_bytes: 5 * 1024 ** 3, max_multipart_bytes: 50 * 1024 ** 3, presign_ttl_seconds: 900, presign_max_ttl_seconds: 7 * 24 * 3600 },
};

const port = { type: 'integer', minimum: 0, maximum: 65535 } as const;
const listen = {
  type: 'object', additionalProperties: false, required: ['host', 'port'],
  properties: { host: { type: 'string', minLength: 1 }, port },
} as const;
const positive = { type: 'integer', minimum: 1 } as const;

/** The JSON Schema of the whole file; every object refuses unknown keys. */
export const CONFIG_SCHEMA = {
  type: 'object', additionalProperties: false,
  $defs: WORKLOAD_SCHEMA_DEFS,
  properties: {
    workload: WORKLOAD_CONFIG_SCHEMA,
    server: {
      type: 'object', additionalProperties: false,
      properties: { host: { type: 'string', minLength: 1 }, port, body_limit_bytes: positive, trust_proxy: { type: 'boolean' }, shutdown_grace_ms: { type: 'integer', minimum: 0, maximum: 3_600_000 },
        tls: { anyOf: [{
          type: 'object', additionalProperties: false, required: ['cert_file', 'key_file'],
          properties: { cert_file: { type: 'string', minLength: 1 }, key_file: { type: 'string', minLength: 1 } },
        }, { type: 'null' }] },
      },
    },
    management: { anyOf: [listen, { type: 'null' }] },
    data_dir: { type: 'string', minLength: 1 },
    store: {
      type: 'object', additionalProperties: false,
      properties: {
        database_url: { anyOf: [{ type: 'string', pattern: '^postgres(ql)?://' }, { type: 'null' }] },
        pool_size: { type: 'integer', minimum: 1, maximum: 1000 },
      },
    },
    auth: {
      type: 'object', additionalProperties: false,
      properties: {
        issuer: { type: 'string', minLength: 1 },
        audience: { type: 'string', minLength: 1 },
        access_token_ttl_seconds: { type: 'integer', minimum: 60, maximum: 86400 },
        refresh_token_ttl_seconds: { type: 'integer', minimum: 60 },
        rate_limit: {
          type: 'object', additionalProperties: false,
          properties: { window_seconds: positive, max_failures_per_client: positive, max_failures_per_address: positive },
        },
      },
    },
    logging: {
      type: 'object', additionalProperties: false,
      properties: { level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] } },
    },
    query: {
      type: 'object', additionalProperties: false,
      properties: {
        default_schema: { type: 'string', minLength: 1 },
        max_result_rows: { type: 'integer', minimum: 1, maximum: 100_000_000 },
        max_timeout_ms: { type: 'integer', minimum: 1000 },
        history_max_pending: { type: 'integer', minimum: 1 },
        default_warehouse: { type: 'string', minLength: 1 },
        warehouses: {
          type: 'object', minProperties: 1,
          additionalProperties: {
            type: 'object', additionalProperties: false, required: ['cu_per_hour'],
            properties: { cu_per_hour: { type: 'number', minimum: 0 } },
          },
        },
        workers: { type: 'integer', minimum: 1, maximum: 256 },
        threads_per_worker: { type: 'integer', minimum: 1, maximum: 256 },
        data_directories: { type: 'array', items: { type: 'string', minLength: 1 } },
        spill_directory: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'null' }] },
      },
    },
    storage: {
      type: 'object', additionalProperties: false,
      properties: {
        cache: {
          type: 'object', additionalProperties: false,
          properties: {
            max_bytes: { type: 'integer', minimum: 0 },
            directory: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'null' }] },
            concurrency: { type: 'integer', minimum: 1, maximum: 1024 },
            verify_etags: { type: 'boolean' },
          },
        },
        vending: { type: 'object', additionalProperties: false, properties: { cache_sessions: { type: 'boolean' } } },
      },
    },
    catalogs: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['name'],
        properties: {
          name: { type: 'string', minLength: 1 },
          tenant: { type: 'string', minLength: 1 },
          warehouse_location: { type: 'string', minLength: 1 },
          location_mappings: {
            type: 'array',
            items: { type: 'object', additionalProperties: false, required: ['from', 'to'], properties: { from: { type: 'string', minLength: 1 }, to: { type: 'string', minLength: 1 } } },
          },
          // Checked in depth at start by the REST parser (server/operator-catalogs.ts), so both
          // accept the same profiles and say the same things about bad ones.
          storage_profile: { type: 'object' },
        },
      },
    },
    loading: {
      type: 'object', additionalProperties: false,
      properties: {
        max_file_bytes: { type: 'integer', minimum: 1 },
        max_upload_bytes: { type: 'integer', minimum: 1 },
        max_multipart_bytes: { type: 'integer', minimum: 1 },
        presign_ttl_seconds: { type: 'integer', minimum: 1 },
        presign_max_ttl_seconds: { type: 'integer', minimum: 1 },
      },
    },
    principals: {
      type: 'object', additionalProperties: false,
      properties: {
        encryption_key: { anyOf: [{ type: 'string', pattern: '^[A-Za-z0-9+/]{43}=$' }, { type: 'null' }] },
        invitation_url_base: { type: 'string', pattern: '^https?://' },
        invitation_ttl_hours: positive,
        lockout_threshold: positive,
        lockout_seconds: positive,
        mfa_recent_seconds: positive,
        pat_max_ttl_days: positive,
        archive_retention_days: positive,
        audit_retention_days: positive,
        totp_issuer: { type: 'string', minLength: 1 },
        background_jobs: { type: 'boolean' },
        password_hashing: {
          type: 'object', additionalProperties: false,
          properties: {
            isolation: { enum: ['processes', 'in_process'] },
            workers: { type: 'integer', minimum: 0, maximum: 64 },
            niceness: { type: 'integer', minimum: 0, maximum: 19 },
            idle_policy: { type: 'boolean' },
            max_queued: { type: 'integer', minimum: 0, maximum: 100000 },
          },
        },
      },
    },
    webhooks: {
      type: 'object', additionalProperties: false,
      properties: {
        interval_seconds: positive,
        timeout_ms: { type: 'integer', minimum: 100, maximum: 120000 },
        allow_private_targets: { type: 'boolean' },
        batch_size: { type: 'integer', minimum: 1, maximum: 1000 },
        ca_file: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'null' }] },
      },
    },
  },
} as const;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Short environment names for the settings operators change most; any key also as FLOE__A__B. */
const ENV_ALIASES: ReadonlyMap<string, readonly string[]> = new Map([
  ['FLOE_HOST', ['server', 'host']],
  ['FLOE_PORT', ['server', 'port']],
  ['FLOE_DATA_DIR', ['data_dir']],
  ['FLOE_DATABASE_URL', ['store', 'database_url']],
  ['DATABASE_URL', ['store', 'database_url']],
  ['FLOE_LOG_LEVEL', ['logging', 'level']],
  ['FLOE_AUTH_ISSUER', ['auth', 'issuer']],
  ['FLOE_AUTH_AUDIENCE', ['auth', 'audience']],
  ['FLOE_ACCESS_TOKEN_TTL_SECONDS', ['auth', 'access_token_ttl_seconds']],
  ['FLOE_TLS_CERT_FILE', ['server', 'tls', 'cert_file']],
  ['FLOE_TLS_KEY_FILE', ['server', 'tls', 'key_file']],
]);

/** FLOE_* variables that are not configuration keys (read elsewhere) and so are not refused. */
const ENV_NOT_CONFIG = new Set(['FLOE_CONFIG', 'FLOE_MANAGEMENT_LISTEN', 'FLOE_BOOTSTRAP_CLIENT_ID', 'FLOE_BOOTSTRAP_CLIENT_SECRET', 'FLOE_REBUILD_PGLITE_TEMPLATE']);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

export interface LoadConfigOptions {
  /** Path of the operator file (JSON when it ends in .json, YAML otherwise). */
  readonly file?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Highest precedence: command-line flags, as partial config. */
  readonly overrides?: JsonObject;
}

/** Defaults ← file ← environment ← flags, then validated as a whole. */
export function loadConfig(options: LoadConfigOptions = {}): FloeConfig {
  const env = options.env ?? process.env;
  const merged = structuredClone(DEFAULT_CONFIG) as unknown as JsonObject;
  const file = options.file ?? env.FLOE_CONFIG;
  if (file) deepMerge(merged, readConfigFile(file), file);
  deepMerge(merged, envOverrides(env), 'environment');
  if (options.overrides) deepMerge(merged, options.overrides, 'command line');
  return validateConfig(merged);
}

export function readConfigFile(file: string): JsonObject {
  let text: string;
  try {
    text = readFileSync(resolve(file), 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read configuration file ${file}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    throw new ConfigError(`configuration file ${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(e as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`configuration file ${file} must hold an object at the top`);
  return parsed as JsonObject;
}

function envOverrides(env: NodeJS.ProcessEnv): JsonObject {
  const out: JsonObject = {};
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined) continue;
    let path: readonly string[] | undefined = ENV_ALIASES.get(name);
    if (!path && name.startsWith('FLOE__')) path = name.slice(6).toLowerCase().split('__');
    if (!path) {
      if (name.startsWith('FLOE_') && !ENV_NOT_CONFIG.has(name) && !name.startsWith('FLOE_TEST_')) {
        throw new ConfigError(`unknown environment variable ${name} (settings are FLOE__<SECTION>__<KEY>, e.g. FLOE__SERVER__PORT)`);
      }
      continue;
    }
    setPath(out, path, parseEnvValue(raw));
  }
  if (env.FLOE_MANAGEMENT_LISTEN) {
    const m = /^(.+):(\d+)$/.exec(env.FLOE_MANAGEMENT_LISTEN);
    if (!m) throw new ConfigError(`FLOE_MANAGEMENT_LISTEN must be host:port, got ${JSON.stringify(env.FLOE_MANAGEMENT_LISTEN)}`);
    out.management = { host: m[1]!, port: Number(m[2]) };
  }
  return out;
}

/** Environment values are YAML scalars: `8181` is a number, `true` a boolean, `null` null. */
function parseEnvValue(raw: string): Json {
  try {
    const v = parseYaml(raw) as unknown;
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) return v as Json;
  } catch {
    // not a YAML scalar: keep the text
  }
  return raw;
}

function setPath(target: JsonObject, path: readonly string[], value: Json): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as JsonObject;
  }
  node[path[path.length - 1]!] = value;
}

function deepMerge(target: JsonObject, source: JsonObject, origin: string): void {
  for (const [key, value] of Object.entries(source)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') throw new ConfigError(`${origin}: key ${key} is not allowed`);
    const current = target[key];
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && current !== null && typeof current === 'object' && !Array.isArray(current)) {
      deepMerge(current, value, origin);
    } else {
      target[key] = value;
    }
  }
}

const ajv = new Ajv({ allErrors: true, strict: true });
const validate = ajv.compile(CONFIG_SCHEMA);

export function validateConfig(candidate: unknown): FloeConfig {
  if (validate(candidate)) {
    const config = candidate as unknown as FloeConfig;
    if (!Object.hasOwn(config.query.warehouses, config.query.default_warehouse)) {
      throw new ConfigError(`invalid configuration:\n  query.default_warehouse: no warehouse ${JSON.stringify(config.query.default_warehouse)} in query.warehouses`);
    }
    try {
      resolveWorkloadConfig(config.workload);
    } catch (e) {
      if (e instanceof WorkloadConfigError) throw new ConfigError(e.message);
      throw e;
    }
    return config;
  }
  const messages = (validate.errors ?? []).filter((e) => e.keyword !== 'anyOf').map(describeError);
  throw new ConfigError(`invalid configuration:\n  ${[...new Set(messages)].join('\n  ')}`);
}

function describeError(e: ErrorObject): string {
  const at = e.instancePath.replace(/\/(\d+)(?=\/|$)/g, '[$1]').slice(1).replaceAll('/', '.') || '(top level)';
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return `unknown key ${at === '(top level)' ? extra : `${at}.${extra}`}`;
  }
  if (e.keyword === 'enum') return `${at}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  return `${at}: ${e.message ?? 'is invalid'}`;
}
