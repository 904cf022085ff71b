/**
 * SCIM Users over the metadata store: what `/scim/v2/Users` does, each mutation in one
 * transaction with its audit row and event (like the SQL statements; the actor is the tenant's
 * SCIM token). Only users this interface provisioned (identity_source 'SCIM') are visible to it:
 * a token can neither read nor change users an administrator created, and so can never reach the
 * bootstrap administrator.
 *
 * States (docs/principals.md, "SCIM provisioning"):
 *   POST (active)            → PROVISIONED          POST (active false) → SUSPENDED
 *   active false on PROVISIONED → SUSPENDED (session epoch bumped; remembered as the IdP's doing)
 *   active true on SUSPENDED → PROVISIONED, only when the suspension was the IdP's
 *   DELETE                   → DEACTIVATED (soft: row, history and audit trail stay; 404 to SCIM)
 *   POST of a DEACTIVATED provisioned userName → PROVISIONED again, same id and history
 */
import { randomUUID } from 'node:crypto';
import type { MetaStore, SqlExecutor } from '../../catalog/store/meta-store.js';
import { isFloeError } from '../../grammar/errors.js';
import { recordAudit } from '../principals/audit.js';
import type { AuditEventType } from '../principals/events.js';
import { loadPasswordPolicy, policyViolations, type PasswordHasher, type PasswordPolicy } from '../principals/passwords.js';
import { loadProvisioningPolicy } from '../principals/provisioning-policy.js';
import type { Clock } from '../principals/settings.js';
import { checkEmail, checkName, checkText, writePassword } from '../principals/statements.js';
import { badValue, notFound, ScimError } from './errors.js';
import type { FilterCondition } from './filter.js';
import { applyPatch, type PatchOperation } from './patch.js';
import { documentOf, primaryEmail, type ScimEmail, type ScimName, type ScimUserDocument, type StoredScimUser } from './resource.js';
import type { ScimCaller } from './token.js';

export interface ScimContext {
  readonly store: MetaStore;
  readonly clock: Clock;
  readonly passwords: PasswordHasher;
}

/** The identity_source of provisioned users (DESCRIBE USER shows it). */
export const SCIM_IDENTITY_SOURCE = 'SCIM';

/** Largest page; `count` beyond it is cut to it (RFC 7644 §3.4.2.4 lets the provider lower it). */
export const MAX_PAGE_SIZE = 200;
export const DEFAULT_PAGE_SIZE = 100;

interface Row {
  id: string;
  name: string;
  status: string;
  email: string | null;
  display_name: string | null;
  created_at: Date;
  updated_at: Date;
  external_id: string | null;
  name_parts: ScimName | string;
  emails: ScimEmail[] | string;
  scim_active: boolean;
  suspended_by_scim: boolean;
  version: number;
}

const SELECT_USER = `
  SELECT p.id, p.name, p.status, p.email, p.display_name, p.created_at, p.updated_at,
         s.external_id, s.name AS name_parts, s.emails, s.active AS scim_active, s.suspended_by_scim, s.version
    FROM principals p JOIN scim_users s ON s.principal_id = p.id
   WHERE p.tenant_id = $1 AND p.kind = 'user' AND p.identity_source = '${SCIM_IDENTITY_SOURCE}' AND p.status IN ('PROVISIONED', 'SUSPENDED')`;

function json<T>(v: T | string): T {
  return typeof v === 'string' ? JSON.parse(v) as T : v;
}

function toStored(r: Row): StoredScimUser & { readonly suspendedByScim: boolean } {
  return {
    id: r.id, name: r.name, status: r.status, email: r.email, displayName: r.display_name, externalId: r.external_id,
    nameParts: json(r.name_parts), emails: json(r.emails), scimActive: r.scim_active, version: Number(r.version),
    createdAt: r.created_at, updatedAt: r.updated_at, suspendedByScim: r.suspended_by_scim,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function load(db: SqlExecutor, tenantId: string, id: string, lock = false): Promise<(StoredScimUser & { readonly suspendedByScim: boolean }) | undefined> {
  if (!UUID.test(id)) return undefined;
  const r = await db.query<Row>(`${SELECT_USER} AND p.id = $2${lock ? ' FOR UPDATE OF p' : ''}`, [tenantId, id]);
  return r.rows[0] && toStored(r.rows[0]);
}

export async function getScimUser(ctx: ScimContext, caller: ScimCaller, id: string): Promise<StoredScimUser> {
  const u = await load(ctx.store, caller.tenantId, id);
  if (!u) throw notFound(id);
  return u;
}

/** One page of users matching every condition, oldest first (a stable order for paging). */
export async function listScimUsers(ctx: ScimContext, caller: ScimCaller, conditions: readonly FilterCondition[], startIndex: number, count: number): Promise<{ total: number; users: StoredScimUser[] }> {
  const params: unknown[] = [caller.tenantId];
  const where: string[] = [];
  for (const c of conditions) {
    params.push(c.value);
    const $ = `$${params.length}`;
    switch (c.attribute) {
      case 'userName': where.push(`lower(p.name) = lower(${$})`); break;
      case 'externalId': where.push(`s.external_id = ${$}`); break;
      case 'id': if (!UUID.test(c.value)) where.push('false'); else where.push(`p.id = ${$}::uuid`); break;
      case 'displayName': where.push(`lower(p.display_name) = lower(${$})`); break;
      case 'email': where.push(`(lower(p.email) = lower(${$}) OR EXISTS (SELECT 1 FROM jsonb_array_elements(s.emails) e WHERE lower(e->>'value') = lower(${$})))`); break;
      case 'active': where.push(`(p.status = 'PROVISIONED') = ${$}`); break;
    }
  }
  const filtered = `${SELECT_USER}${where.map((w) => ` AND ${w}`).join('')}`;
  const total = Number((await ctx.store.query<{ n: string | number }>(`SELECT count(*) AS n FROM (${filtered}) x`, params)).rows[0]?.n ?? 0);
  if (count === 0) return { total, users: [] };
  const page = await ctx.store.query<Row>(`${filtered} ORDER BY p.created_at, p.id LIMIT ${count} OFFSET ${startIndex - 1}`, params);
  return { total, users: page.rows.map(toStored) };
}

// ------------------------------------------------------------------ validation

/** The principal-row values of a document, or `invalidValue` naming what is wrong. */
function principalValues(doc: ScimUserDocument): { name: string; email: string; displayName: string | null } {
  const email = primaryEmail(doc);
  if (email === undefined) throw badValue('a user needs an e-mail address: send emails, or a userName that is one');
  try {
    checkName('user', doc.userName);
    checkEmail(email);
    checkText('displayName', doc.displayName ?? undefined);
    checkText('externalId', doc.externalId ?? undefined);
    for (const [part, v] of Object.entries(doc.name)) checkText(`name.${part}`, v);
  } catch (e) {
    if (isFloeError(e)) throw badValue(e.message);
    throw e;
  }
  if (doc.emails.length > 100) throw badValue('at most 100 e-mail addresses');
  return { name: doc.userName, email, displayName: doc.displayName };
}

/** A pushed password, checked and hashed before any transaction opens; undefined when not kept. */
async function hashPushedPassword(ctx: ScimContext, tenantId: string, doc: ScimUserDocument): Promise<{ hash: string; policy: PasswordPolicy } | undefined> {
  if (doc.password === undefined) return undefined;
  // Kept only where the tenant lets provisioned users sign in with a password; otherwise dropped,
  // so that no unusable credential sits in the store.
  if (!(await loadProvisioningPolicy(ctx.store, tenantId)).has('password')) return undefined;
  const policy = await loadPasswordPolicy(ctx.store, tenantId);
  const violations = policyViolations(policy, doc.password, doc.userName);
  if (violations.length > 0) throw badValue(`the password breaks the tenant's password policy: ${violations.join('; ')}`);
  return { hash: await ctx.passwords.hash(doc.password), policy };
}

function isUniqueViolation(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === '23505';
}

/** Runs a write; a unique-index race (two pushes of one name) answers 409 like the checks do. */
async function writing<T>(ctx: ScimContext, body: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  try {
    return await ctx.store.transaction(body);
  } catch (e) {
    if (isUniqueViolation(e)) throw new ScimError(409, 'userName or e-mail address is taken', 'uniqueness');
    throw e;
  }
}

async function nameTaken(tx: SqlExecutor, tenantId: string, name: string, except: string | null): Promise<{ id: string; identity_source: string; status: string } | undefined> {
  return (await tx.query<{ id: string; identity_source: string; status: string }>(
    `SELECT id, identity_source, status FROM principals WHERE tenant_id = $1 AND lower(name) = lower($2) AND status <> 'EXPUNGED'
        AND ($3::uuid IS NULL OR id <> $3::uuid) FOR UPDATE`, [tenantId, name, except])).rows[0];
}

async function requireFreeEmail(tx: SqlExecutor, tenantId: string, email: string, except: string): Promise<void> {
  const taken = await tx.query(`SELECT 1 FROM principals WHERE tenant_id = $1 AND lower(email) = lower($2) AND status <> 'EXPUNGED' AND id <> $3`, [tenantId, email, except]);
  if (taken.rows.length > 0) throw new ScimError(409, `the e-mail address of ${email.replace(/^.*@/, '…@')} belongs to another user`, 'uniqueness');
}

async function audit(tx: SqlExecutor, caller: ScimCaller, type: AuditEventType, target: { id: string; name: string }, at: Date, details: Record<string, unknown> = {}): Promise<void> {
  // The actor is the token (its row id), named `scim`: the audit log says the identity provider did it.
  await recordAudit(tx, { tenantId: caller.tenantId, actor: { id: caller.tokenId, name: 'scim' }, target, type, details: { via: 'scim', ...details }, at });
}

// ------------------------------------------------------------------ create

/** POST /Users: a new PROVISIONED (or, sent inactive, SUSPENDED) user, or a deleted one revived. */
export async function createScimUser(ctx: ScimContext, caller: ScimCaller, doc: ScimUserDocument): Promise<StoredScimUser> {
  const values = principalValues(doc);
  const password = await hashPushedPassword(ctx, caller.tenantId, doc);
  const now = new Date(ctx.clock.now());
  const status = doc.active ? 'PROVISIONED' : 'SUSPENDED';
  const id = await writing(ctx, async (tx) => {
    const existing = await nameTaken(tx, caller.tenantId, values.name, null);
    const revive = existing?.identity_source === SCIM_IDENTITY_SOURCE && existing.status === 'DEACTIVATED';
    if (existing && !revive) throw new ScimError(409, `userName ${values.name} is taken`, 'uniqueness');
    const id = revive ? existing.id : randomUUID();
    await requireFreeEmail(tx, caller.tenantId, values.email, id);
    if (revive) {
      await tx.query(
        `UPDATE principals SET name = $2, status = $3, email = $4, display_name = $5, deactivated_at = NULL,
                status_changed_at = $6, updated_at = $6 WHERE id = $1`, [id, values.name, status, values.email, values.displayName, now]);
      await tx.query(
        `UPDATE scim_users SET external_id = $2, name = $3, emails = $4, active = $5, suspended_by_scim = $6, version = version + 1 WHERE principal_id = $1`,
        [id, doc.externalId, JSON.stringify(doc.name), JSON.stringify(doc.emails), doc.active, !doc.active]);
    } else {
      await tx.query(
        `INSERT INTO principals (id, tenant_id, kind, name, status, email, display_name, identity_source, created_at, updated_at, status_changed_at)
         VALUES ($1, $2, 'user', $3, $4, $5, $6, '${SCIM_IDENTITY_SOURCE}', $7, $7, $7)`,
        [id, caller.tenantId, values.name, status, values.email, values.displayName, now]);
      await tx.query(
        `INSERT INTO scim_users (principal_id, tenant_id, external_id, name, emails, active, suspended_by_scim) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [id, caller.tenantId, doc.externalId, JSON.stringify(doc.name), JSON.stringify(doc.emails), doc.active, !doc.active]);
    }
    if (password) await writePassword(tx, caller.tenantId, id, password.hash, now, password.policy);
    await audit(tx, caller, revive ? 'undrop_user' : 'create_user', { id, name: values.name }, now, { status, password: password !== undefined });
    return id;
  });
  return getScimUser(ctx, caller, id);
}

// ------------------------------------------------------------------ replace and patch

/**
 * PUT and PATCH: the next document is computed from the current one (twice: once outside the
 * transaction to hash a pushed password, once on the locked row), then written with the status
 * change `active` implies.
 */
async function updateScimUser(ctx: ScimContext, caller: ScimCaller, id: string, next: (current: ScimUserDocument) => ScimUserDocument): Promise<StoredScimUser> {
  const before = await load(ctx.store, caller.tenantId, id);
  if (!before) throw notFound(id);
  const password = await hashPushedPassword(ctx, caller.tenantId, next(documentOf(before)));
  const now = new Date(ctx.clock.now());
  await writing(ctx, async (tx) => {
    const cur = await load(tx, caller.tenantId, id, true);
    if (!cur) throw notFound(id);
    const doc = next(documentOf(cur));
    const values = principalValues(doc);
    const renamed = values.name !== cur.name;
    if (renamed && await nameTaken(tx, caller.tenantId, values.name, cur.id)) throw new ScimError(409, `userName ${values.name} is taken`, 'uniqueness');
    await requireFreeEmail(tx, caller.tenantId, values.email, cur.id);
    const fields = [
      ...(renamed ? ['userName'] : []),
      ...(values.email.toLowerCase() !== (cur.email ?? '').toLowerCase() || JSON.stringify(doc.emails) !== JSON.stringify(cur.emails) ? ['emails'] : []),
      ...(values.displayName !== cur.displayName ? ['displayName'] : []),
      ...(doc.externalId !== cur.externalId ? ['externalId'] : []),
      ...(JSON.stringify(doc.name) !== JSON.stringify(cur.nameParts) ? ['name'] : []),
    ];
    await tx.query('UPDATE principals SET name = $2, email = $3, display_name = $4, updated_at = $5 WHERE id = $1', [cur.id, values.name, values.email, values.displayName, now]);
    await tx.query('UPDATE scim_users SET external_id = $2, name = $3, emails = $4, active = $5, version = version + 1 WHERE principal_id = $1',
      [cur.id, doc.externalId, JSON.stringify(doc.name), JSON.stringify(doc.emails), doc.active]);
    const target = { id: cur.id, name: values.name };
    if (renamed) {
      await bumpEpoch(tx, cur.id, now);
      await audit(tx, caller, 'rename_user', target, now, { old_name: cur.name, new_name: values.name });
    }
    if (password) {
      await writePassword(tx, caller.tenantId, cur.id, password.hash, now, password.policy);
      await bumpEpoch(tx, cur.id, now);
      await audit(tx, caller, 'change_password', target, now);
    }
    if (cur.status === 'PROVISIONED' && !doc.active) {
      await setStatus(tx, cur.id, 'SUSPENDED', now, true);
      await bumpEpoch(tx, cur.id, now);
      await audit(tx, caller, 'suspend_user', target, now, { previous_status: cur.status });
    } else if (cur.status === 'SUSPENDED' && doc.active && cur.suspendedByScim) {
      await setStatus(tx, cur.id, 'PROVISIONED', now, false);
      await audit(tx, caller, 'unsuspend_user', target, now, { status: 'PROVISIONED' });
    }
    if (fields.length > 0) await audit(tx, caller, 'alter_user', target, now, { fields });
  });
  return getScimUser(ctx, caller, id);
}

async function bumpEpoch(tx: SqlExecutor, id: string, now: Date): Promise<void> {
  await tx.query('UPDATE principals SET session_epoch = session_epoch + 1, updated_at = $2 WHERE id = $1', [id, now]);
}

async function setStatus(tx: SqlExecutor, id: string, status: 'PROVISIONED' | 'SUSPENDED', now: Date, byScim: boolean): Promise<void> {
  await tx.query('UPDATE principals SET status = $2, status_changed_at = $3, updated_at = $3 WHERE id = $1', [id, status, now]);
  await tx.query('UPDATE scim_users SET suspended_by_scim = $2 WHERE principal_id = $1', [id, byScim]);
}

/** PUT /Users/{id}: the sent document replaces the kept attributes (absent ones are cleared). */
export function replaceScimUser(ctx: ScimContext, caller: ScimCaller, id: string, doc: ScimUserDocument): Promise<StoredScimUser> {
  return updateScimUser(ctx, caller, id, () => doc);
}

/** PATCH /Users/{id}. */
export function patchScimUser(ctx: ScimContext, caller: ScimCaller, id: string, operations: readonly PatchOperation[]): Promise<StoredScimUser> {
  return updateScimUser(ctx, caller, id, (current) => applyPatch(current, operations));
}

// ------------------------------------------------------------------ delete

/**
 * DELETE /Users/{id}: DEACTIVATED, as DROP USER … CASCADE — role grants revoked (listed in the
 * audit row), session epoch bumped — but the row, its query history and its audit trail stay; the
 * archive sweeper tombstones it after the retention window like any dropped user.
 */
export async function deleteScimUser(ctx: ScimContext, caller: ScimCaller, id: string): Promise<void> {
  const now = new Date(ctx.clock.now());
  await ctx.store.transaction(async (tx) => {
    const cur = await load(tx, caller.tenantId, id, true);
    if (!cur) throw notFound(id);
    const roles = (await tx.query<{ role: string }>('SELECT role FROM principal_roles WHERE principal_id = $1 ORDER BY role', [cur.id])).rows.map((r) => r.role);
    if (roles.length > 0) await tx.query('DELETE FROM principal_roles WHERE principal_id = $1', [cur.id]);
    await tx.query(`UPDATE principals SET status = 'DEACTIVATED', deactivated_at = $2, status_changed_at = $2, updated_at = $2 WHERE id = $1`, [cur.id, now]);
    await tx.query('UPDATE scim_users SET suspended_by_scim = false, version = version + 1 WHERE principal_id = $1', [cur.id]);
    await bumpEpoch(tx, cur.id, now);
    await audit(tx, caller, 'drop_user', { id: cur.id, name: cur.name }, now, { cascade: true, dropped_roles: roles });
  });
}
