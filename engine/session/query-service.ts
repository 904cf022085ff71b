/**
 * The query service: what `POST /api/query` calls. One statement per request:
 *
 *   parse (cached by text) → redact for history → record `queued` → run by category → record the
 *   terminal status with its metrics → answer `{columns, types, rows, row_count, elapsed_ms}`.
 *
 * Statements fall in categories (`STATEMENT_CATEGORY`, one row per IR kind so a new statement kind
 * does not compile until it has a home): session statements (USE, SET, RESET) and SHOW QUERY
 * HISTORY are answered here; principal statements go to the principals context; queries, DML and
 * DDL to the runners the engine plugs in (planner + workers, catalog).
 *
 * Session state is carried by the client, as Trino clients carry theirs: a request may name its
 * `catalog`, `schema` and `session` settings, and a USE/SET/RESET answer returns the new state in
 * `session` for the client to send back. No state lives in the server between requests, so any
 * replica can answer any request.
 */
import { randomUUID } from 'node:crypto';
import { StorageError } from '../../storage-creds/file-io.js';
import { QueryIds } from './query-id.js';
import { FloeError, floeError, isFloeError, type ErrorCode } from '../../grammar/errors.js';
import type { ParseResult, Parser } from '../../grammar/parser.js';
import { queryType } from '../../grammar/analysis.js';
import type { Statement, StatementKind, OptionValue } from '../../grammar/ir.js';
import { redactParsed } from '../../grammar/redact.js';
import { unreachable } from '../../grammar/ir.js';
import type { QueryHistory, QueryLifecycle } from '../history/query-history.js';
import { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT } from '../history/query-history.js';
import { statementAllowedUnderRestriction, tokenRestriction } from '../principals/index.js';
import { refuseEngineStatement } from '../planner/isolation.js';
import type { SystemViewer } from '../system/provider.js';
import type { Cancellation } from '../wlm/index.js';
import { sqlState } from '../../catalog/store/meta-store.js';

/** Who runs the statement, as the auth hook established it. */
export interface QueryPrincipal {
  readonly tenantId: string;
  readonly principalId: string;
  readonly name: string;
  readonly kind: 'user' | 'service_account';
  /** How the token was obtained (`password`, `client_credentials`, `pat`, …). */
  readonly authMethod: string;
  /** The token's scope claim (a sign-in restriction lives there). */
  readonly scopeClaim: string;
  readonly roles: readonly string[];
  readonly isTenantAdmin: boolean;
  /** RFC 8176 method references of the token (`pwd`, `otp`, …). */
  readonly amr: readonly string[];
  /** When the principal authenticated, seconds since the epoch. */
  readonly authTime: number;
  readonly defaultWarehouse: string | null;
}

/** The tenant and principal a history record is filed under. */
export interface HistoryOwner {
  readonly tenantId: string;
  readonly principalId: string;
  readonly name: string;
}

/** Session state the client carries between requests. */
export interface SessionState {
  readonly catalog: string;
  readonly schema: string;
  /** Settings by lower-case name (`svc.workload_class`, `svc.resource_pool`, …). */
  readonly settings: ReadonlyMap<string, string>;
}

export interface QueryRequest {
  readonly sql: string;
  readonly timeoutMs?: number;
  readonly catalog?: string;
  readonly schema?: string;
  readonly session?: Readonly<Record<string, string>>;
  /** Where the query comes from (a dashboard, an ETL job): routing rules match it. */
  readonly source?: string;
  /** Cancels the statement (the client went away, or an operator cancelled it). */
  readonly cancellation?: Cancellation;
  /** The client asked for an Arrow IPC stream: queries build one beside the rows (only then). */
  readonly arrow?: boolean;
}

/** A result set; values are JSON-safe and lossless (see docs/query.md). */
export interface RowSet {
  readonly columns: readonly string[];
  readonly types: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** Arrow IPC stream of the same rows, when the runner produced one. */
  readonly arrow?: Uint8Array;
  readonly bytesScanned?: number;
  readonly fragments?: number;
}

export interface QueryAnswer extends RowSet {
  readonly queryId: string;
  readonly rowCount: number;
  readonly elapsedMs: number;
  /** The session state after the statement; present when the statement changed it. */
  readonly session?: { readonly catalog: string; readonly schema: string; readonly settings: Readonly<Record<string, string>> };
}

/** Everything a runner gets besides the statement. */
export interface StatementContext {
  readonly principal: QueryPrincipal;
  readonly session: SessionState;
  readonly queryId: string;
  readonly lifecycle: QueryLifecycle;
  readonly timeoutMs: number | undefined;
  readonly source: string | undefined;
  readonly cancellation: Cancellation | undefined;
  /** Build the Arrow IPC stream of a query's rows (the client asked for one). */
  readonly arrow?: boolean;
}

/** Runs one category of statements; supplied by the context that owns it. */
export type StatementRunner = (ctx: StatementContext, statement: Statement) => Promise<RowSet>;

export type StatementCategory = 'query' | 'ddl' | 'principal' | 'session' | 'history' | 'workload' | 'stage';

/** Where each statement kind is run. */
export const STATEMENT_CATEGORY: Readonly<Record<StatementKind, StatementCategory>> = {
  Query: 'query', Explain: 'query', Insert: 'query', Update: 'query', Delete: 'query', Merge: 'query', CopyInto: 'query',
  CreateSchema: 'ddl', DropSchema: 'ddl', CreateTable: 'ddl', CreateTableAs: 'query', DropTable: 'ddl', AlterTable: 'ddl',
  CreateView: 'ddl', DropView: 'ddl', CreateIndex: 'ddl', DropIndex: 'ddl', ShowCatalogs: 'ddl', ShowSchemas: 'ddl', ShowTables: 'ddl', ShowViews: 'ddl', DescribeTable: 'ddl',
  Use: 'session', SetWorkloadClass: 'session', SetSession: 'session', ResetSession: 'session',
  ShowQueryHistory: 'history', ShowResourceGroups: 'workload',
  CreateUser: 'principal', AlterUserSet: 'principal', AlterUserUnset: 'principal', AlterUserSuspend: 'principal',
  AlterUserUnsuspend: 'principal', AlterUserUnlock: 'principal', AlterUserRename: 'principal', AlterUserSetLegalHold: 'principal',
  AlterUserClearLegalHold: 'principal', AlterSelfPassword: 'principal', AlterSelfEnrollMfa: 'principal', AlterSelfVerifyMfa: 'principal',
  AlterSelfDisableMfa: 'principal', DropUser: 'principal', UndropUser: 'principal', ExpungeUser: 'principal', ShowUsers: 'principal',
  DescribeUser: 'principal', RedeemInvitation: 'principal', CreateServiceAccount: 'principal', DropServiceAccount: 'principal',
  AddKeypair: 'principal', DropKeypair: 'principal', ShowServiceAccounts: 'principal', CreatePat: 'principal', DropPat: 'principal',
  ShowPats: 'principal', CreateWebhook: 'principal', DropWebhook: 'principal', ShowWebhooks: 'principal', GrantManage: 'principal',
  RevokeManage: 'principal', CreateRole: 'principal', DropRole: 'principal', GrantRole: 'principal', RevokeRole: 'principal',
  CreateStage: 'stage', DropStage: 'stage', ShowStages: 'stage', ListStage: 'stage', RemoveStage: 'stage', GrantStage: 'stage', RevokeStage: 'stage',
};

export interface QueryServiceOptions {
  readonly parser: Parser;
  /**
   * Parses a request's text; default `parser.tryParse`. The server passes a `ParseOffload`, which
   * parses long texts on a worker thread (grammar/parse-offload.ts).
   */
  readonly parse?: (sql: string) => ParseResult | Promise<ParseResult>;
  readonly history: QueryHistory;
  readonly clock: { now(): number };
  /** Runners by category; a category without one answers UNSUPPORTED_STATEMENT. */
  readonly runners: Partial<Record<'query' | 'ddl' | 'principal' | 'workload' | 'stage', StatementRunner>> & {
    /** REDEEM INVITATION without a bearer token: who it is filed under in history, and the redemption. */
    readonly invitation?: {
      readonly historyOwnerOf: (statement: Statement) => Promise<HistoryOwner>;
      readonly redeem: (statement: Statement) => Promise<RowSet>;
    };
  };
  readonly defaultCatalog: string;
  readonly defaultSchema: string;
  /** Largest result in rows; past it the statement fails with RESULT_TOO_LARGE, never truncates. */
  readonly maxResultRows: number;
  /** Largest `timeout_ms` a request may ask for. */
  readonly maxTimeoutMs: number;
  /** Logs bugs (never user errors, never SQL). */
  readonly logBug?: (reference: string, error: unknown) => void;
}

/** Session settings Floe knows; others are refused so a typo does not pass silently. */
export const SESSION_SETTINGS: ReadonlyMap<string, (v: string) => string | undefined> = new Map([
  ['svc.workload_class', (v) => (['interactive', 'medium', 'batch'].includes(v.toLowerCase()) ? v.toLowerCase() : undefined)],
  ['svc.resource_pool', (v) => (/^[A-Za-z0-9_.-]{1,128}$/.test(v) ? v : undefined)],
  ['svc.query_source', (v) => (v.length <= 256 ? v : undefined)],
]);

export class QueryService {
  readonly #ids = new QueryIds();

  constructor(private readonly o: QueryServiceOptions) {}

  private parse(sql: string): ParseResult | Promise<ParseResult> {
    return this.o.parse !== undefined ? this.o.parse(sql) : this.o.parser.tryParse(sql);
  }

  /** Parses, records and runs one statement. Throws `FloeError` (with `queryId` set) on failure. */
  async execute(principal: QueryPrincipal, request: QueryRequest): Promise<QueryAnswer> {
    // Not recorded: history is what cannot take it (engine/history, the backlog bound).
    this.o.history.refuseIfBacklogged();
    const started = this.o.clock.now();
    const queryId = this.#ids.next();
    const parsed = await this.parse(request.sql);
    const lifecycle = this.o.history.begin({
      queryId, tenantId: principal.tenantId, userId: principal.principalId, userName: principal.name,
      // Redaction uses the parse tree when there is one, the token fallback otherwise.
      sql: redactParsed(request.sql, parsed), queryType: parsed.ok ? queryType(parsed.statement) : 'unknown',
      source: request.source ?? request.session?.['svc.query_source'] ?? null, warehouse: principal.defaultWarehouse,
    });
    try {
      // DuckDB statements Floe refuses (ATTACH, INSTALL, COPY … TO, FROM 'file.csv', …) do not parse;
      // they answer 42501 like every other escape attempt, not 42601.
      if (!parsed.ok) throw refuseEngineStatement(request.sql) ?? parsed.error;
      const session = this.sessionOf(request);
      const timeoutMs = request.timeoutMs;
      if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > this.o.maxTimeoutMs)) {
        throw floeError('INVALID_PARAMETER', { name: 'timeout_ms', detail: `must be an integer from 1 to ${this.o.maxTimeoutMs}` });
      }
      // A sign-in that must first change its password or enroll a second factor may run only that.
      const restriction = tokenRestriction(principal.scopeClaim);
      if (restriction !== undefined && !statementAllowedUnderRestriction(restriction, parsed.statement)) {
        throw floeError('PERMISSION_DENIED', { detail: restriction === 'change_password' ? 'the password must be changed first (ALTER USER SELF SET PASSWORD)' : 'a second factor must be enrolled first (ALTER USER SELF ENROLL MFA TOTP)' });
      }
      const ctx: StatementContext = { principal, session, queryId, lifecycle, timeoutMs, source: request.source, cancellation: request.cancellation, arrow: request.arrow === true };
      const outcome = await this.run(ctx, parsed.statement);
      const result = outcome.result;
      if (result.rows.length > this.o.maxResultRows) throw floeError('RESULT_TOO_LARGE', { limit: this.o.maxResultRows, unit: 'rows' });
      if (!lifecycle.ended) {
        if (lifecycle.record.status === 'queued') lifecycle.running();
        lifecycle.completed({ rowsProduced: result.rows.length, bytesScanned: result.bytesScanned ?? 0, fragments: result.fragments ?? 0 });
      }
      return {
        ...result, queryId, rowCount: result.rows.length, elapsedMs: Math.max(0, this.o.clock.now() - started),
        ...(outcome.session ? { session: sessionJson(outcome.session) } : {}),
      };
    } catch (e) {
      const error = this.toFloeError(e);
      if (!lifecycle.ended) {
        const failure = { code: error.code, sqlState: error.sqlState, message: error.message };
        // Stopped from outside rather than failed: SQLSTATE class 57, operator intervention (a cancel,
        // a timeout or the query killer: 57014; the server shutting down: 57P01), or a full queue.
        if (error.sqlState.startsWith('57') || error.code === 'QUEUE_FULL') lifecycle.cancelled(failure);
        else lifecycle.failed(failure);
      }
      throw Object.assign(error, { queryId });
    }
  }

  /**
   * A request without a bearer token: only REDEEM INVITATION, whose invitation token is the
   * credential. Anything else is `undefined` (the route answers 401, and nothing is recorded: no
   * statement ran). A redemption is recorded whether it succeeds or fails, in the tenant and
   * under the invitee its token names (the default tenant's `anonymous` for a token nobody has).
   */
  async executeAnonymous(request: QueryRequest): Promise<QueryAnswer | undefined> {
    this.o.history.refuseIfBacklogged();
    const parsed = await this.parse(request.sql);
    if (!parsed.ok || parsed.statement.kind !== 'RedeemInvitation') return undefined;
    const runner = this.o.runners.invitation;
    if (!runner) throw floeError('UNSUPPORTED_STATEMENT', { what: 'REDEEM INVITATION (principal management is not configured)' });
    const started = this.o.clock.now();
    const owner = await runner.historyOwnerOf(parsed.statement);
    const queryId = this.#ids.next();
    const lifecycle = this.o.history.begin({
      queryId, tenantId: owner.tenantId, userId: owner.principalId, userName: owner.name,
      sql: redactParsed(request.sql, parsed), queryType: queryType(parsed.statement), source: request.source ?? null, warehouse: null,
    });
    lifecycle.running();
    try {
      const result = await runner.redeem(parsed.statement);
      lifecycle.completed({ rowsProduced: result.rows.length });
      return { columns: result.columns, types: result.types, rows: result.rows, queryId, rowCount: result.rows.length, elapsedMs: Math.max(0, this.o.clock.now() - started) };
    } catch (e) {
      const error = this.toFloeError(e);
      lifecycle.failed({ code: error.code, sqlState: error.sqlState, message: error.message });
      throw Object.assign(error, { queryId });
    }
  }

  private sessionOf(request: QueryRequest): SessionState {
    const settings = new Map<string, string>();
    for (const [k, v] of Object.entries(request.session ?? {})) {
      const name = k.toLowerCase();
      const check = SESSION_SETTINGS.get(name);
      if (!check) throw floeError('INVALID_PARAMETER', { name: `session.${k}`, detail: 'unknown session setting' });
      const value = typeof v === 'string' ? check(v) : undefined;
      if (value === undefined) throw floeError('INVALID_PARAMETER', { name: `session.${k}`, detail: `bad value ${JSON.stringify(v)}` });
      settings.set(name, value);
    }
    return { catalog: request.catalog ?? this.o.defaultCatalog, schema: request.schema ?? this.o.defaultSchema, settings };
  }

  private async run(ctx: StatementContext, s: Statement): Promise<{ result: RowSet; session?: SessionState }> {
    const category = STATEMENT_CATEGORY[s.kind];
    // Queries are marked running by the workload manager when admitted; the rest run at once.
    if (category !== 'query') ctx.lifecycle.running();
    switch (category) {
      case 'session':
        return this.runSession(ctx, s);
      case 'history':
        return { result: await this.showQueryHistory(ctx, s) };
      case 'query':
      case 'ddl':
      case 'principal':
      case 'workload':
      case 'stage': {
        const runner = this.o.runners[category];
        if (!runner) throw floeError('UNSUPPORTED_STATEMENT', { what: `${s.kind} (the ${category} runner is not configured)` });
        return { result: await runner(ctx, s) };
      }
      default:
        return unreachable(category);
    }
  }

  private runSession(ctx: StatementContext, s: Statement): { result: RowSet; session: SessionState } {
    const cur = ctx.session;
    const settings = new Map(cur.settings);
    let catalog = cur.catalog;
    let schema = cur.schema;
    switch (s.kind) {
      case 'Use': {
        const parts = s.name.parts.map((p) => p.name);
        if (parts.length === 1) schema = parts[0]!;
        else if (parts.length === 2) [catalog, schema] = [parts[0]!, parts[1]!];
        else throw floeError('INVALID_PARAMETER', { name: 'USE', detail: 'expected <schema> or <catalog>.<schema>' });
        break;
      }
      case 'SetWorkloadClass':
        settings.set('svc.workload_class', s.workloadClass);
        break;
      case 'SetSession': {
        const name = s.name.toLowerCase();
        const check = SESSION_SETTINGS.get(name);
        if (!check) throw floeError('PERMISSION_DENIED', { detail: `setting ${s.name} cannot be changed (known settings: ${[...SESSION_SETTINGS.keys()].join(', ')})` });
        if (s.value === undefined) {
          settings.delete(name);
          break;
        }
        const value = check(optionText(s.value));
        if (value === undefined) throw floeError('INVALID_PARAMETER', { name: s.name, detail: `bad value ${JSON.stringify(optionText(s.value))}` });
        settings.set(name, value);
        break;
      }
      case 'ResetSession':
        if (s.name === undefined) settings.clear();
        else if (SESSION_SETTINGS.has(s.name.toLowerCase())) settings.delete(s.name.toLowerCase());
        else throw floeError('PERMISSION_DENIED', { detail: `setting ${s.name} cannot be changed` });
        break;
      default:
        throw new Error(`not a session statement: ${s.kind}`);
    }
    const next: SessionState = { catalog, schema, settings };
    return { result: { columns: ['status'], types: ['VARCHAR'], rows: [['OK']] }, session: next };
  }

  private async showQueryHistory(ctx: StatementContext, s: Statement): Promise<RowSet> {
    if (s.kind !== 'ShowQueryHistory') throw new Error(`not SHOW QUERY HISTORY: ${s.kind}`);
    const limit = s.limit ?? HISTORY_DEFAULT_LIMIT;
    if (limit < 0 || limit > HISTORY_MAX_LIMIT) throw floeError('INVALID_PARAMETER', { name: 'LIMIT', detail: `must be from 0 to ${HISTORY_MAX_LIMIT}` });
    const rows = await this.o.history.list(viewerOf(ctx.principal), { limit });
    const columns = this.o.history.columns;
    return {
      columns: columns.map((c) => c.name),
      types: columns.map((c) => (c.type === 'TIMESTAMPTZ' ? 'TIMESTAMP WITH TIME ZONE' : c.type)),
      rows: rows.map((r) => columns.map((c) => {
        const v = r[c.name];
        return v instanceof Date ? v.toISOString() : v ?? null;
      })),
    };
  }

  private toFloeError(e: unknown): FloeError {
    if (isFloeError(e)) return e;
    // Text the store cannot hold (U+0000) that a statement's own check let through: the client's
    // value, not a bug. Every other store error is one.
    const state = sqlState(e);
    if (state === '22021' || state === '22P05') {
      return floeError('INVALID_PARAMETER', { name: 'a string', detail: 'contains a character the store cannot hold (U+0000)' });
    }
    // The warehouse's object store failed after the FileIO's retries: the client is told so, with
    // the operation, location and cause (never a key), as /v1 tells it (503 or 500).
    if (e instanceof StorageError) {
      return e.failure === 'unavailable' ? floeError('SERVICE_UNAVAILABLE', { detail: e.message }) : floeError('STORAGE_ERROR', { detail: e.message });
    }
    const reference = randomUUID().slice(0, 8);
    this.o.logBug?.(reference, e);
    return floeError('INTERNAL_ERROR', { reference });
  }
}

export function viewerOf(p: QueryPrincipal): SystemViewer {
  return { tenantId: p.tenantId, principalId: p.principalId, isTenantAdmin: p.isTenantAdmin };
}

function optionText(v: OptionValue): string {
  return typeof v === 'string' ? v : String(v);
}

function sessionJson(s: SessionState): { catalog: string; schema: string; settings: Record<string, string> } {
  return { catalog: s.catalog, schema: s.schema, settings: Object.fromEntries(s.settings) };
}

/** Codes whose HTTP status the registry gives; re-exported for the route. */
export type { ErrorCode };
