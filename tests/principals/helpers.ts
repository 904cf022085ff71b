/** Helpers for the principal-management tests: run statements as a given principal, mint tokens. */
import { Parser, isFloeError, type FloeError } from '../../grammar/index.js';
import { actorFromAuth, executePrincipalStatement, isPrincipalStatement, type PrincipalContext, type PrincipalResult } from '../../engine/principals/index.js';
import { findPrincipalByName, loadPrincipalAuthState } from '../../engine/principals/principals.js';
import type { Authenticated, AuthMethod } from '../../server/auth/tokens.js';
import type { TestServer } from '../helpers/server.js';
import type { Scope } from '../../engine/principals/scopes.js';

const parser = new Parser({ cacheSize: 0 });

export function contextFor(server: TestServer, auth: Authenticated | undefined): PrincipalContext {
  const s = server.state;
  return {
    store: s.store, clock: s.clock, tenantId: auth?.principal.tenantId, actor: auth && actorFromAuth(auth),
    config: s.config.principals, webhooks: s.config.webhooks, secrets: s.principals.secrets, passwords: s.principals.passwords,
  };
}

export type Outcome = { readonly ok: true; readonly result: PrincipalResult } | { readonly ok: false; readonly error: FloeError };

/** Runs one statement; a FloeError becomes a value, anything else is a test failure. */
export async function runSql(server: TestServer, auth: Authenticated | undefined, sql: string): Promise<Outcome> {
  const stmt = parser.parse(sql);
  if (!isPrincipalStatement(stmt)) throw new Error(`not a principal statement: ${sql}`);
  try {
    return { ok: true, result: await executePrincipalStatement(contextFor(server, auth), stmt) };
  } catch (e) {
    if (isFloeError(e)) return { ok: false, error: e };
    throw e;
  }
}

/** Runs a statement that must succeed. */
export async function must(server: TestServer, auth: Authenticated | undefined, sql: string): Promise<PrincipalResult> {
  const r = await runSql(server, auth, sql);
  if (!r.ok) throw new Error(`${sql}: ${r.error.code} ${r.error.message}`);
  return r.result;
}

/** The error code of a statement that must fail. */
export async function refusal(server: TestServer, auth: Authenticated | undefined, sql: string): Promise<string> {
  const r = await runSql(server, auth, sql);
  if (r.ok) throw new Error(`${sql} succeeded: ${JSON.stringify(r.result.rows)}`);
  return r.error.code;
}

export async function adminAuth(server: TestServer): Promise<Authenticated> {
  const v = await server.state.tokens.verify(await server.token());
  if (!v.ok) throw new Error(v.reason);
  return v.auth;
}

export interface MintOptions {
  readonly authMethod?: AuthMethod;
  readonly amr?: readonly string[];
  /** Seconds since the epoch. */
  readonly authTime?: number;
  readonly scopes?: readonly string[];
  readonly tenant?: string;
}

/** A token for a principal as the token service would issue it (no password hashing needed). */
export async function mintToken(server: TestServer, name: string, o: MintOptions = {}): Promise<string> {
  const p = await findPrincipalByName(server.state.store, o.tenant ?? 'default', name);
  if (!p) throw new Error(`no principal ${name}`);
  const issued = await server.state.tokens.issue({
    principal: p, scopes: (o.scopes ?? ['sql']) as Scope[], authMethod: o.authMethod ?? 'password', amr: o.amr ?? ['pwd'],
    ...(o.authTime !== undefined ? { authTime: o.authTime } : {}),
  });
  return issued.accessToken;
}

export async function authOf(server: TestServer, token: string): Promise<Authenticated> {
  const v = await server.state.tokens.verify(token);
  if (!v.ok) throw new Error(`token refused: ${v.reason}`);
  return v.auth;
}

export async function authAs(server: TestServer, name: string, o: MintOptions = {}): Promise<Authenticated> {
  return authOf(server, await mintToken(server, name, o));
}

export async function epochOf(server: TestServer, name: string): Promise<number> {
  const p = await findPrincipalByName(server.state.store, 'default', name);
  if (!p) throw new Error(`no principal ${name}`);
  return (await loadPrincipalAuthState(server.state.store, p.tenantId, p.id))!.sessionEpoch;
}

export async function signInRequest(server: TestServer, body: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await server.app.inject({ method: 'POST', url: '/api/auth/sign-in', payload: body });
  return { status: r.statusCode, body: r.json() as Record<string, unknown> };
}

/** A password that passes the default policy, distinct per call site. */
export function strongPassword(tag: string): string {
  return `Zq7!${[...tag].reverse().join("")}-Kx93-vLmP`;
}
