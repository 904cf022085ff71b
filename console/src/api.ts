/**
 * The console's one way to the server: same-origin `fetch` calls to the same endpoints every API
 * client uses (`/api/auth/sign-in`, `/api/query`, `/api/query-history`, `/api/tables`), with the
 * access token in memory only. Nothing is written to cookies or Web Storage, so a reload or a
 * closed tab signs out, and no other page of the origin can read the token.
 */
import { RESERVED_WORDS } from '../../grammar/keywords.js';

/** What the sign-in endpoint answered with a token. */
export interface Session {
  readonly token: string;
  readonly tenant: string;
  readonly username: string;
  readonly scope: string;
  /** Set when the token may only change the password or set up a second factor. */
  readonly restriction?: 'change_password' | 'enroll_mfa' | undefined;
  readonly expiresAt: number;
}

/** An error from the server in the `/api` wire format: `{error, message, sql_state}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly sqlState: string | undefined,
    readonly queryId: string | undefined,
    readonly position: { readonly line: number; readonly column: number } | undefined,
    /** The whole error body (MFA_REQUIRED carries `methods` and `passkey_options`). */
    readonly body: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

interface ErrorBody { error?: string; message?: string; sql_state?: string; query_id?: string; line?: number; column?: number }

async function errorOf(r: Response): Promise<ApiError> {
  let body: ErrorBody = {};
  try {
    body = (await r.json()) as ErrorBody;
  } catch {
    // not JSON: keep the status only
  }
  const position = typeof body.line === 'number' && typeof body.column === 'number' ? { line: body.line, column: body.column } : undefined;
  return new ApiError(r.status, body.error ?? `HTTP_${r.status}`, body.message ?? r.statusText, body.sql_state, body.query_id, position, body as Record<string, unknown>);
}

export interface SignInFields {
  readonly tenant: string;
  readonly username: string;
  readonly password: string;
  readonly totp?: string;
  readonly recoveryCode?: string;
  /** A WebAuthn assertion (from @simplewebauthn/browser's startAuthentication). */
  readonly passkey?: unknown;
}

export class Api {
  #session: Session | undefined;
  /** Called when the server refuses the token (expired, revoked): the app goes back to sign-in. */
  onSignedOut: (reason: string) => void = () => {};

  get session(): Session | undefined {
    return this.#session;
  }

  signOut(): void {
    this.#session = undefined;
  }

  async signIn(fields: SignInFields): Promise<Session> {
    const body: Record<string, unknown> = { tenant: fields.tenant, username: fields.username, password: fields.password };
    if (fields.passkey) body.passkey = fields.passkey;
    if (fields.totp) body.totp = fields.totp;
    if (fields.recoveryCode) body.recovery_code = fields.recoveryCode;
    const r = await fetch('/api/auth/sign-in', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
    if (!r.ok) throw await errorOf(r);
    const a = (await r.json()) as { access_token: string; expires_in: number; scope: string; restriction?: Session['restriction'] };
    this.#session = { token: a.access_token, tenant: fields.tenant, username: fields.username, scope: a.scope, restriction: a.restriction, expiresAt: Date.now() + a.expires_in * 1000 };
    return this.#session;
  }

  /** A request with the bearer token; a 401 signs the console out. */
  async request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const s = this.#session;
    if (!s) throw new ApiError(401, 'NOT_AUTHENTICATED', 'not signed in', undefined, undefined, undefined);
    const headers: Record<string, string> = { authorization: `Bearer ${s.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(path, { method, headers, credentials: 'omit', cache: 'no-store', ...(body !== undefined ? { body: JSON.stringify(body) } : {}), ...(signal ? { signal } : {}) });
    if (r.status === 401) {
      const e = await errorOf(r);
      this.#session = undefined;
      this.onSignedOut(e.message);
      throw e;
    }
    if (!r.ok) throw await errorOf(r);
    return r;
  }

  /** Takes the new token an answer carries after a change that moved the session epoch. */
  adoptToken(a: { access_token: string; expires_in: number; scope: string }): void {
    const s = this.#session;
    if (!s) return;
    this.#session = { ...s, token: a.access_token, scope: a.scope, restriction: undefined, expiresAt: Date.now() + a.expires_in * 1000 };
  }

  /** POST /api/query with the session; `signal` aborts it, which cancels the statement on the server. */
  async query(sql: string, options: { signal?: AbortSignal; session?: unknown } = {}): Promise<QueryAnswer> {
    const r = await this.request('POST', '/api/query', { sql, ...(options.session ? { session: options.session } : {}) }, options.signal);
    return parseQueryAnswer(await r.text());
  }

  /** REDEEM INVITATION runs without a token: the invitation token is the credential. */
  async redeemInvitation(invitation: string, password: string): Promise<void> {
    const r = await fetch('/api/query', { method: 'POST', headers: { 'content-type': 'application/json' }, credentials: 'omit', cache: 'no-store',
      body: JSON.stringify({ sql: `REDEEM INVITATION ${sqlString(invitation)} WITH PASSWORD ${sqlString(password)}` }) });
    if (!r.ok) throw await errorOf(r);
  }

  async deleteJson<T>(path: string): Promise<T> {
    return (await (await this.request('DELETE', path)).json()) as T;
  }

  async postJson<T>(path: string, body: unknown = {}): Promise<T> {
    return (await (await this.request('POST', path, body)).json()) as T;
  }

  /** GET with integers beyond ±2^53 kept exact (as strings). */
  async getJsonExact<T>(path: string): Promise<T> {
    return parseJsonExact(await (await this.request('GET', path)).text()) as T;
  }

  async getJson<T>(path: string): Promise<T> {
    return (await (await this.request('GET', path)).json()) as T;
  }
}

/** A SQL string literal: quotes doubled, so any text is one literal. */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** A SQL identifier, quoted when it is not a plain lower-case name or is a reserved word (`default`). */
export function sqlIdent(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) && !RESERVED_WORDS.has(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** What POST /api/query answers. Cells keep the JSON's own text for numbers (see parseQueryAnswer). */
export interface QueryAnswer {
  readonly query_id: string;
  readonly columns: readonly string[];
  readonly types: readonly string[];
  readonly rows: readonly (readonly Cell[])[];
  readonly row_count: number;
  readonly elapsed_ms: number;
  readonly session?: unknown;
}

export type Cell = string | number | boolean | null | { readonly [k: string]: unknown } | readonly unknown[];

/**
 * Parses a query answer. Exactness comes from the server: DECIMAL values and integers outside
 * ±2^53 arrive as strings (docs/query.md), so plain JSON.parse loses no digit; a pass of our own
 * over the text (to guard numbers) cost a 100k-row answer a 400 ms long task.
 */
export function parseQueryAnswer(text: string): QueryAnswer {
  return JSON.parse(text) as QueryAnswer;
}

/**
 * JSON.parse that keeps integers beyond ±2^53 exact, as strings: Iceberg metadata carries 64-bit
 * snapshot ids as JSON numbers, which JSON.parse would round. Only for small documents (table
 * metadata): the pass over the text costs time in proportion to its length.
 */
export function parseJsonExact(text: string): unknown {
  const guarded = text.replace(/("(?:[^"\\]|\\.)*")|(-?\d{16,})(?![\d.eE])/g, (m, str: string | undefined, big: string | undefined) =>
    str !== undefined || big === undefined || Number.isSafeInteger(Number(big)) ? m : `"${big}"`);
  return JSON.parse(guarded);
}
