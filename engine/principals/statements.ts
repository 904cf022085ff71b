/**
 * The principal-management statements: one function, `executePrincipalStatement`, takes a parsed
 * statement and the request context and returns result rows, or throws a FloeError from the
 * registry. Each mutation runs in one transaction with its audit row, audit event and webhook
 * delivery rows. Slow work (Argon2id) runs before the transaction opens, so that no transaction
 * (and, on PGlite, no connection) is held while a password hashes.
 *
 * State machine (docs/principals.md): CREATE USER → ACTIVE (with password) or INVITED;
 * SUSPEND → SUSPENDED; UNSUSPEND → ACTIVE, or INVITED when the user has no password yet;
 * DROP → DEACTIVATED; UNDROP → ACTIVE; EXPUNGE (DEACTIVATED, no legal hold) → EXPUNGED (the row
 * stays, the name is released). DROP SERVICE ACCOUNT tombstones the account at once (EXPUNGED).
 */
import { randomUUID } from 'node:crypto';
import type { SqlExecutor } from '../../catalog/store/meta-store.js';
import { floeError } from '../../grammar/errors.js';
import { unreachable, type Ident, type Statement, type UserField, type UserOptions } from '../../grammar/ir.js';
import { recordAudit } from './audit.js';
import { isKnownEventSelector, type AuditEventType } from './events.js';
import { validatePublicKey } from './keypairs.js';
import { loadPasswordPolicy, PasswordHasher, policyViolations, type PasswordPolicy } from './passwords.js';
import { TENANT_ADMIN_ROLE, type PrincipalKind, type PrincipalStatus } from './principals.js';
import { loadProvisioningPolicy } from './provisioning-policy.js';
import { isTenantAdmin, loadManagePrivileges, privilegeName, type ManagePrivilegeName } from './privileges.js';
import { ALL_SCOPES, isScope } from './scopes.js';
import { sha256 } from './secrets.js';
import type { Actor, PrincipalContext, PrincipalResult, TokenRestriction } from './settings.js';
import { newInvitationToken, newPat, patDisplayPrefix } from './token-format.js';
import { matchTotp, newTotpSecret, totpUri } from './totp.js';
import { isPrivateAddressLiteral } from './webhook-targets.js';

/** The statement kinds this context executes. */
export const PRINCIPAL_STATEMENT_KINDS: ReadonlySet<Statement['kind']> = new Set<Statement['kind']>([
  'CreateUser', 'AlterUserSet', 'AlterUserUnset', 'AlterUserSuspend', 'AlterUserUnsuspend', 'AlterUserUnlock',
  'AlterUserRename', 'AlterUserSetLegalHold', 'AlterUserClearLegalHold',
  'AlterSelfPassword', 'AlterSelfEnrollMfa', 'AlterSelfVerifyMfa', 'AlterSelfDisableMfa',
  'DropUser', 'UndropUser', 'ExpungeUser', 'ShowUsers', 'DescribeUser', 'RedeemInvitation',
  'CreateServiceAccount', 'DropServiceAccount', 'AddKeypair', 'DropKeypair', 'ShowServiceAccounts',
  'CreatePat', 'DropPat', 'ShowPats', 'CreateWebhook', 'DropWebhook', 'ShowWebhooks',
  'GrantManage', 'RevokeManage', 'CreateRole', 'DropRole', 'GrantRole', 'RevokeRole',
]);

export type PrincipalStatement = Extract<Statement, { kind: 'CreateUser' | 'AlterUserSet' | 'AlterUserUnset' | 'AlterUserSuspend' | 'AlterUserUnsuspend' | 'AlterUserUnlock' | 'AlterUserRename' | 'AlterUserSetLegalHold' | 'AlterUserClearLegalHold' | 'AlterSelfPassword' | 'AlterSelfEnrollMfa' | 'AlterSelfVerifyMfa' | 'AlterSelfDisableMfa' | 'DropUser' | 'UndropUser' | 'ExpungeUser' | 'ShowUsers' | 'DescribeUser' | 'RedeemInvitation' | 'CreateServiceAccount' | 'DropServiceAccount' | 'AddKeypair' | 'DropKeypair' | 'ShowServiceAccounts' | 'CreatePat' | 'DropPat' | 'ShowPats' | 'CreateWebhook' | 'DropWebhook' | 'ShowWebhooks' | 'GrantManage' | 'RevokeManage' | 'CreateRole' | 'DropRole' | 'GrantRole' | 'RevokeRole' }>;

export function isPrincipalStatement(s: Statement): s is PrincipalStatement {
  return PRINCIPAL_STATEMENT_KINDS.has(s.kind);
}

/** REDEEM INVITATION is the one statement that runs without a bearer token: the invitation token is the credential. */
export function needsNoBearerToken(s: Statement): boolean {
  return s.kind === 'RedeemInvitation';
}

/**
 * What a restricted sign-in token may run (any statement, not only principal ones): the session
 * calls this before executing anything.
 */
export function statementAllowedUnderRestriction(restriction: TokenRestriction | undefined, s: Statement): boolean {
  if (restriction === undefined) return true;
  switch (restriction) {
    case 'change_password':
      return s.kind === 'AlterSelfPassword';
    case 'enroll_mfa':
      return s.kind === 'AlterSelfEnrollMfa' || s.kind === 'AlterSelfVerifyMfa';
    default:
      return unreachable(restriction);
  }
}

// ------------------------------------------------------------------ rows and helpers

interface PrincipalRow {
  id: string;
  tenant_id: string;
  kind: PrincipalKind;
  name: string;
  status: PrincipalStatus;
  email: string | null;
  display_name: string | null;
  default_role: string | null;
  default_warehouse: string | null;
  comment: string | null;
  must_change_password: boolean;
  identity_source: string;
  session_epoch: number | string;
  login_failures: number;
  last_failed_login_at: Date | null;
  last_login_at: Date | null;
  legal_hold: boolean;
  legal_hold_reason: string | null;
  is_bootstrap_principal: boolean;
  created_at: Date;
  updated_at: Date;
  deactivated_at: Date | null;
  status_changed_at: Date;
}

const PRINCIPAL_COLUMNS = `id, tenant_id, kind, name, status, email, display_name, default_role, default_warehouse, comment,
  must_change_password, identity_source, session_epoch, login_failures, last_failed_login_at, last_login_at, legal_hold,
  legal_hold_reason, is_bootstrap_principal, created_at, updated_at, deactivated_at, status_changed_at`;

const NAME_PATTERN = /^[^\u0000-\u001f\u007f]{1,128}$/;
// No whitespace and no control characters (U+0000 cannot be stored, the others cannot be mailed).
const EMAIL_PATTERN = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;
const MAX_TEXT = 2000;

/** A per-statement working set: the transaction, the tenant, the actor, one timestamp. */
/** One statement's (or console action's) context: who acts, in which tenant, at what time. */
export interface Run {
  readonly ctx: PrincipalContext;
  readonly tenantId: string;
  readonly actor: Actor;
  readonly now: Date;
}

function ok(message: string): PrincipalResult {
  return { columns: ['status'], types: ['VARCHAR'], rows: [[message]] };
}

function table(columns: readonly (readonly [string, string])[], rows: readonly (readonly unknown[])[]): PrincipalResult {
  return { columns: columns.map((c) => c[0]), types: columns.map((c) => c[1]), rows };
}

function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

function identName(i: Ident): string {
  return i.name;
}

/** Refuses a principal name Floe cannot hold (INVALID_PARAMETER); also used by SCIM provisioning. */
export function checkName(kind: string, name: string): void {
  if (!NAME_PATTERN.test(name)) throw floeError('INVALID_PARAMETER', { name: `${kind} name`, detail: 'must be 1 to 128 characters without control characters' });
  if (/^expunged-/i.test(name)) throw floeError('INVALID_PARAMETER', { name: `${kind} name`, detail: 'names starting with "expunged-" are reserved' });
}

export function checkText(name: string, value: string | undefined): void {
  if (value !== undefined && value.length > MAX_TEXT) throw floeError('INVALID_PARAMETER', { name, detail: `at most ${MAX_TEXT} characters` });
}

export function checkEmail(email: string): void {
  if (!EMAIL_PATTERN.test(email) || email.length > 254) throw floeError('INVALID_PARAMETER', { name: 'EMAIL', detail: 'must be an e-mail address' });
}

async function findPrincipal(db: SqlExecutor, tenantId: string, name: string, lock = false): Promise<PrincipalRow | undefined> {
  const r = await db.query<PrincipalRow>(
    `SELECT ${PRINCIPAL_COLUMNS} FROM principals WHERE tenant_id = $1 AND lower(name) = lower($2) AND status <> 'EXPUNGED'${lock ? ' FOR UPDATE' : ''}`,
    [tenantId, name]);
  return r.rows[0];
}

export async function findById(db: SqlExecutor, id: string, lock = false): Promise<PrincipalRow | undefined> {
  return (await db.query<PrincipalRow>(`SELECT ${PRINCIPAL_COLUMNS} FROM principals WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id])).rows[0];
}

async function requireUser(db: SqlExecutor, tenantId: string, name: Ident, lock = true): Promise<PrincipalRow> {
  const row = await findPrincipal(db, tenantId, identName(name), lock);
  if (!row || row.kind !== 'user') throw floeError('NOT_FOUND', { what: `user ${identName(name)}` });
  return row;
}

async function requireServiceAccount(db: SqlExecutor, tenantId: string, name: Ident, lock = true): Promise<PrincipalRow> {
  const row = await findPrincipal(db, tenantId, identName(name), lock);
  if (!row || row.kind !== 'service_account') throw floeError('NOT_FOUND', { what: `service account ${identName(name)}` });
  return row;
}

function notDeactivated(row: PrincipalRow, what: string): void {
  if (row.status === 'DEACTIVATED') throw floeError('INVALID_STATE', { detail: `user ${row.name} is dropped (DEACTIVATED); UNDROP it before ${what}` });
}

export async function bumpEpoch(db: SqlExecutor, id: string, now: Date): Promise<void> {
  await db.query('UPDATE principals SET session_epoch = session_epoch + 1, updated_at = $2 WHERE id = $1', [id, now]);
}

async function setStatus(db: SqlExecutor, id: string, status: PrincipalStatus, now: Date): Promise<void> {
  await db.query('UPDATE principals SET status = $2, status_changed_at = $3, updated_at = $3 WHERE id = $1', [id, status, now]);
}

export async function audit(tx: SqlExecutor, run: Run, type: AuditEventType, target: { id: string; name: string } | undefined, details: Record<string, unknown> = {}): Promise<void> {
  await recordAudit(tx, { tenantId: run.tenantId, actor: { id: run.actor.id, name: run.actor.name }, target, type, details, at: run.now });
}

/** identity_source of users pushed over SCIM (engine/scim/users.ts). */
const SCIM_IDENTITY_SOURCE = 'SCIM';

/** The identity provider's last word on a provisioned user's `active`. */
async function scimActive(db: SqlExecutor, id: string): Promise<boolean> {
  return (await db.query<{ active: boolean }>('SELECT active FROM scim_users WHERE principal_id = $1', [id])).rows[0]?.active ?? true;
}

async function hasPassword(db: SqlExecutor, id: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM principal_passwords WHERE principal_id = $1', [id])).rows.length > 0;
}

function lockedAt(row: PrincipalRow, ctx: PrincipalContext, nowMs: number): boolean {
  if (row.login_failures < ctx.config.lockout_threshold || !row.last_failed_login_at) return false;
  return row.last_failed_login_at.getTime() + ctx.config.lockout_seconds * 1000 > nowMs;
}

function hasherOf(ctx: PrincipalContext): PasswordHasher {
  return ctx.passwords ?? new PasswordHasher();
}

// ------------------------------------------------------------------ authorization

interface Authority {
  readonly admin: boolean;
  readonly privileges: ReadonlySet<ManagePrivilegeName>;
}

async function authorityOf(db: SqlExecutor, actor: Actor): Promise<Authority> {
  return { admin: isTenantAdmin(actor.roles), privileges: await loadManagePrivileges(db, actor.id) };
}

function requireAdmin(a: Authority, what: string): void {
  if (!a.admin) throw floeError('PERMISSION_DENIED', { detail: `${what} requires the ${TENANT_ADMIN_ROLE} role` });
}

function requirePrivilege(a: Authority, p: ManagePrivilegeName, what: string): void {
  if (!a.admin && !a.privileges.has(p)) throw floeError('PERMISSION_DENIED', { detail: `${what} requires ${p} or the ${TENANT_ADMIN_ROLE} role` });
}

/** Holders of MANAGE USERS may not act on administrators (no escalation through a password reset). */
async function requireManageableUser(db: SqlExecutor, a: Authority, target: PrincipalRow, what: string): Promise<void> {
  requirePrivilege(a, 'MANAGE USERS', what);
  if (a.admin) return;
  const r = await db.query('SELECT 1 FROM principal_roles WHERE principal_id = $1 AND role = $2', [target.id, TENANT_ADMIN_ROLE]);
  if (r.rows.length > 0) throw floeError('PERMISSION_DENIED', { detail: `only a ${TENANT_ADMIN_ROLE} may ${what} an administrator` });
}

// ------------------------------------------------------------------ entry point

/**
 * Executes one principal-management statement. `ctx.actor` is undefined only for REDEEM
 * INVITATION (which needs no bearer token); every other statement without an actor is refused.
 */
export async function executePrincipalStatement(ctx: PrincipalContext, stmt: PrincipalStatement): Promise<PrincipalResult> {
  if (stmt.kind === 'RedeemInvitation') return redeemInvitation(ctx, stmt.token, stmt.password);
  const actor = ctx.actor;
  if (!actor || ctx.tenantId === undefined) throw floeError('NOT_AUTHENTICATED', { detail: 'this statement needs a bearer token' });
  if (!statementAllowedUnderRestriction(actor.restriction, stmt)) {
    throw floeError('PERMISSION_DENIED', { detail: actor.restriction === 'change_password' ? 'the password must be changed first (ALTER USER SELF SET PASSWORD)' : 'a second factor must be enrolled first (ALTER USER SELF ENROLL MFA TOTP)' });
  }
  const run: Run = { ctx, tenantId: ctx.tenantId, actor, now: new Date(ctx.clock.now()) };
  const store = ctx.store;
  switch (stmt.kind) {
    case 'CreateUser': return createUser(run, stmt.name, stmt.ifNotExists, stmt.options);
    case 'AlterUserSet': return alterUserSet(run, stmt.name, stmt.options);
    case 'AlterUserUnset': return alterUserUnset(run, stmt.name, stmt.fields);
    case 'AlterUserSuspend': return store.transaction(async (tx) => {
      const a = await authorityOf(tx, actor);
      const u = await requireUser(tx, run.tenantId, stmt.name);
      await requireManageableUser(tx, a, u, 'suspend');
      notDeactivated(u, 'suspending');
      await setStatus(tx, u.id, 'SUSPENDED', run.now);
      // An administrator's suspension: the identity provider's active=true does not lift it.
      await tx.query('UPDATE scim_users SET suspended_by_scim = false WHERE principal_id = $1', [u.id]);
      await bumpEpoch(tx, u.id, run.now);
      await audit(tx, run, 'suspend_user', u, { previous_status: u.status });
      return ok(`user ${u.name} suspended`);
    });
    case 'AlterUserUnsuspend': return store.transaction(async (tx) => {
      const a = await authorityOf(tx, actor);
      const u = await requireUser(tx, run.tenantId, stmt.name);
      await requireManageableUser(tx, a, u, 'unsuspend');
      if (u.status !== 'SUSPENDED') throw floeError('INVALID_STATE', { detail: `user ${u.name} is ${u.status}, not SUSPENDED` });
      if (u.identity_source === SCIM_IDENTITY_SOURCE) {
        // A provisioned user goes back to PROVISIONED, unless its identity provider also says inactive.
        const idpActive = await scimActive(tx, u.id);
        await tx.query('UPDATE scim_users SET suspended_by_scim = $2 WHERE principal_id = $1', [u.id, !idpActive]);
        if (!idpActive) {
          await audit(tx, run, 'unsuspend_user', u, { status: 'SUSPENDED', identity_provider_active: false });
          return ok(`user ${u.name} stays SUSPENDED: its identity provider has it inactive`);
        }
        await setStatus(tx, u.id, 'PROVISIONED', run.now);
        await audit(tx, run, 'unsuspend_user', u, { status: 'PROVISIONED' });
        return ok(`user ${u.name} is PROVISIONED`);
      }
      const next: PrincipalStatus = await hasPassword(tx, u.id) ? 'ACTIVE' : 'INVITED';
      await setStatus(tx, u.id, next, run.now);
      await audit(tx, run, 'unsuspend_user', u, { status: next });
      return ok(`user ${u.name} is ${next}`);
    });
    case 'AlterUserUnlock': return store.transaction(async (tx) => {
      const a = await authorityOf(tx, actor);
      const u = await requireUser(tx, run.tenantId, stmt.name);
      await requireManageableUser(tx, a, u, 'unlock');
      await tx.query('UPDATE principals SET login_failures = 0, last_failed_login_at = NULL, updated_at = $2 WHERE id = $1', [u.id, run.now]);
      await audit(tx, run, 'unlock_user', u, { login_failures: u.login_failures });
      return ok(`user ${u.name} unlocked`);
    });
    case 'AlterUserRename': return store.transaction(async (tx) => {
      const a = await authorityOf(tx, actor);
      const u = await requireUser(tx, run.tenantId, stmt.name);
      await requireManageableUser(tx, a, u, 'rename');
      notDeactivated(u, 'renaming');
      const newName = identName(stmt.newName);
      checkName('user', newName);
      const clash = await findPrincipal(tx, run.tenantId, newName);
      if (clash && clash.id !== u.id) throw floeError('DUPLICATE_OBJECT', { kind: 'principal', name: newName });
      await tx.query('UPDATE principals SET name = $2, updated_at = $3 WHERE id = $1', [u.id, newName, run.now]);
      await bumpEpoch(tx, u.id, run.now);
      await audit(tx, run, 'rename_user', { id: u.id, name: newName }, { old_name: u.name, new_name: newName });
      return ok(`user ${u.name} renamed to ${newName}`);
    });
    case 'AlterUserSetLegalHold': return store.transaction(async (tx) => {
      requireAdmin(await authorityOf(tx, actor), 'SET LEGAL HOLD');
      const u = await requireUser(tx, run.tenantId, stmt.name);
      if (stmt.reason.trim() === '') throw floeError('INVALID_PARAMETER', { name: 'REASON', detail: 'must not be empty' });
      checkText('REASON', stmt.reason);
      await tx.query('UPDATE principals SET legal_hold = true, legal_hold_reason = $2, updated_at = $3 WHERE id = $1', [u.id, stmt.reason, run.now]);
      await audit(tx, run, 'set_legal_hold', u, { reason: stmt.reason });
      return ok(`legal hold set on user ${u.name}`);
    });
    case 'AlterUserClearLegalHold': return store.transaction(async (tx) => {
      requireAdmin(await authorityOf(tx, actor), 'CLEAR LEGAL HOLD');
      const u = await requireUser(tx, run.tenantId, stmt.name);
      await tx.query('UPDATE principals SET legal_hold = false, legal_hold_reason = NULL, updated_at = $2 WHERE id = $1', [u.id, run.now]);
      await audit(tx, run, 'clear_legal_hold', u, { previous_reason: u.legal_hold_reason });
      return ok(`legal hold cleared on user ${u.name}`);
    });
    case 'AlterSelfPassword': return alterSelfPassword(run, stmt.newPassword, stmt.oldPassword);
    case 'AlterSelfEnrollMfa': return enrollMfa(run);
    case 'AlterSelfVerifyMfa': return verifyMfa(run, stmt.code);
    case 'AlterSelfDisableMfa': return disableMfa(run, stmt.code);
    case 'DropUser': return store.transaction(async (tx) => {
      const a = await authorityOf(tx, actor);
      requirePrivilege(a, 'MANAGE USERS', 'DROP USER');
      const u = await findPrincipal(tx, run.tenantId, identName(stmt.name), true);
      if (!u || u.kind !== 'user' || u.status === 'DEACTIVATED') {
        if (stmt.ifExists) return ok(`user ${identName(stmt.name)} does not exist; nothing dropped`);
        if (u?.status === 'DEACTIVATED') throw floeError('INVALID_STATE', { detail: `user ${u.name} is already dropped` });
        throw floeError('NOT_FOUND', { what: `user ${identName(stmt.name)}` });
      }
      await requireManageableUser(tx, a, u, 'drop');
      if (u.id === actor.id) throw floeError('INVALID_STATE', { detail: 'a user cannot drop itself' });
      const roles = (await tx.query<{ role: string }>('SELECT role FROM principal_roles WHERE principal_id = $1 ORDER BY role', [u.id])).rows.map((r) => r.role);
      if (roles.length > 0 && !stmt.cascade) throw floeError('OBJECT_IN_USE', { detail: `user ${u.name} holds role grants (${roles.join(', ')}); revoke them or use DROP USER … CASCADE` });
      if (roles.length > 0) await tx.query('DELETE FROM principal_roles WHERE principal_id = $1', [u.id]);
      await tx.query('UPDATE principals SET status = $2, deactivated_at = $3, status_changed_at = $3, updated_at = $3 WHERE id = $1', [u.id, 'DEACTIVATED', run.now]);
      await tx.query('UPDATE invitations SET revoked_at = $2 WHERE principal_id = $1 AND redeemed_at IS NULL AND revoked_at IS NULL', [u.id, run.now]);
      await bumpEpoch(tx, u.id, run.now);
      await audit(tx, run, 'drop_user', u, { cascade: stmt.cascade, dropped_roles: roles });
      return ok(`user ${u.name} dropped (DEACTIVATED)`);
    });
    case 'UndropUser': return store.transaction(async (tx) => {
      const a = await authorityOf(tx, actor);
      const u = await requireUser(tx, run.tenantId, stmt.name);
      await requireManageableUser(tx, a, u, 'undrop');
      if (u.status !== 'DEACTIVATED') throw floeError('INVALID_STATE', { detail: `user ${u.name} is ${u.status}, not DEACTIVATED` });
      // A provisioned user comes back PROVISIONED (SUSPENDED when its identity provider has it inactive).
      const provisioned = u.identity_source === SCIM_IDENTITY_SOURCE;
      const idpActive = provisioned && await scimActive(tx, u.id);
      const restored: PrincipalStatus = !provisioned ? 'ACTIVE' : idpActive ? 'PROVISIONED' : 'SUSPENDED';
      if (provisioned) await tx.query('UPDATE scim_users SET suspended_by_scim = $2 WHERE principal_id = $1', [u.id, !idpActive]);
      await tx.query('UPDATE principals SET status = $2, deactivated_at = NULL, status_changed_at = $3, updated_at = $3 WHERE id = $1', [u.id, restored, run.now]);
      await audit(tx, run, 'undrop_user', u, provisioned ? { status: restored } : {});
      return ok(`user ${u.name} restored (${restored})`);
    });
    case 'ExpungeUser': return store.transaction(async (tx) => {
      requireAdmin(await authorityOf(tx, actor), 'EXPUNGE USER');
      const u = await requireUser(tx, run.tenantId, stmt.name);
      if (u.status !== 'DEACTIVATED') throw floeError('INVALID_STATE', { detail: `user ${u.name} is ${u.status}; only DEACTIVATED users can be expunged (DROP USER first)` });
      if (u.legal_hold) throw floeError('LegalHoldActive', { name: u.name });
      if (stmt.reason.trim() === '') throw floeError('INVALID_PARAMETER', { name: 'REASON', detail: 'must not be empty' });
      checkText('REASON', stmt.reason);
      const tombstone = await tombstonePrincipal(tx, u.id, run.now, stmt.reason);
      await audit(tx, run, 'expunge_user', { id: u.id, name: tombstone }, { reason: stmt.reason });
      return ok(`user expunged; the name is released`);
    });
    case 'ShowUsers': return showUsers(run, stmt.like, stmt.status);
    case 'DescribeUser': return describeUser(run, stmt.name);
    case 'CreateServiceAccount': return store.transaction(async (tx) => {
      requirePrivilege(await authorityOf(tx, actor), 'MANAGE SERVICE ACCOUNTS', 'CREATE SERVICE ACCOUNT');
      const name = identName(stmt.name);
      checkName('service account', name);
      checkText('COMMENT', stmt.comment);
      const existing = await findPrincipal(tx, run.tenantId, name);
      if (existing) {
        if (stmt.ifNotExists && existing.kind === 'service_account') return ok(`service account ${existing.name} already exists`);
        throw floeError('DUPLICATE_OBJECT', { kind: 'principal', name });
      }
      const id = randomUUID();
      await tx.query(
        `INSERT INTO principals (id, tenant_id, kind, name, status, default_role, comment, created_at, updated_at, status_changed_at)
         VALUES ($1, $2, 'service_account', $3, 'ACTIVE', $4, $5, $6, $6, $6)`,
        [id, run.tenantId, name, stmt.defaultRole ?? null, stmt.comment ?? null, run.now]);
      await audit(tx, run, 'create_service_account', { id, name }, {});
      return ok(`service account ${name} created`);
    });
    case 'DropServiceAccount': return store.transaction(async (tx) => {
      requirePrivilege(await authorityOf(tx, actor), 'MANAGE SERVICE ACCOUNTS', 'DROP SERVICE ACCOUNT');
      const sa = await findPrincipal(tx, run.tenantId, identName(stmt.name), true);
      if (!sa || sa.kind !== 'service_account') {
        if (stmt.ifExists) return ok(`service account ${identName(stmt.name)} does not exist; nothing dropped`);
        throw floeError('NOT_FOUND', { what: `service account ${identName(stmt.name)}` });
      }
      if (sa.is_bootstrap_principal) throw floeError('INVALID_STATE', { detail: `${sa.name} is the tenant's bootstrap administrator and cannot be dropped` });
      await tombstonePrincipal(tx, sa.id, run.now, 'DROP SERVICE ACCOUNT', false);
      await audit(tx, run, 'drop_service_account', { id: sa.id, name: sa.name });
      return ok(`service account ${sa.name} dropped`);
    });
    case 'AddKeypair': return store.transaction(async (tx) => {
      requirePrivilege(await authorityOf(tx, actor), 'MANAGE SERVICE ACCOUNTS', 'ADD KEYPAIR');
      const sa = await requireServiceAccount(tx, run.tenantId, stmt.account);
      if (!/^[A-Za-z0-9._:-]{1,128}$/.test(stmt.keyId)) throw floeError('INVALID_PARAMETER', { name: 'KEY_ID', detail: 'must be 1 to 128 characters of A-Z a-z 0-9 . _ : -' });
      const v = validatePublicKey(stmt.publicKey, stmt.algorithm);
      if (!v.ok) throw floeError('INVALID_PARAMETER', { name: 'PUBLIC_KEY', detail: v.reason });
      const dup = await tx.query('SELECT 1 FROM principal_keypairs WHERE principal_id = $1 AND key_id = $2 AND revoked_at IS NULL', [sa.id, stmt.keyId]);
      if (dup.rows.length > 0) throw floeError('DUPLICATE_OBJECT', { kind: 'keypair', name: stmt.keyId });
      await tx.query(
        `INSERT INTO principal_keypairs (id, tenant_id, principal_id, key_id, algorithm, public_key, fingerprint, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [randomUUID(), run.tenantId, sa.id, stmt.keyId, v.algorithm, v.pem, v.fingerprint, run.now]);
      await audit(tx, run, 'add_keypair', sa, { key_id: stmt.keyId, algorithm: v.algorithm, fingerprint: v.fingerprint });
      return table([['key_id', 'VARCHAR'], ['algorithm', 'VARCHAR'], ['fingerprint', 'VARCHAR']], [[stmt.keyId, v.algorithm, v.fingerprint]]);
    });
    case 'DropKeypair': return store.transaction(async (tx) => {
      requirePrivilege(await authorityOf(tx, actor), 'MANAGE SERVICE ACCOUNTS', 'DROP KEYPAIR');
      const sa = await requireServiceAccount(tx, run.tenantId, stmt.account);
      const r = await tx.query('UPDATE principal_keypairs SET revoked_at = $3 WHERE principal_id = $1 AND key_id = $2 AND revoked_at IS NULL', [sa.id, stmt.keyId, run.now]);
      if (r.rowCount === 0) {
        if (stmt.ifExists) return ok(`no active keypair ${stmt.keyId}; nothing dropped`);
        throw floeError('NOT_FOUND', { what: `keypair ${stmt.keyId} of ${sa.name}` });
      }
      await audit(tx, run, 'drop_keypair', sa, { key_id: stmt.keyId });
      return ok(`keypair ${stmt.keyId} revoked`);
    });
    case 'ShowServiceAccounts': return store.transaction(async (tx) => {
      requirePrivilege(await authorityOf(tx, actor), 'MANAGE SERVICE ACCOUNTS', 'SHOW SERVICE ACCOUNTS');
      const r = await tx.query<{ name: string; status: string; default_role: string | null; comment: string | null; created_at: Date; key_ids: string[] | null; is_bootstrap_principal: boolean }>(
        `SELECT p.name, p.status, p.default_role, p.comment, p.created_at, p.is_bootstrap_principal,
                (SELECT array_agg(k.key_id ORDER BY k.key_id) FROM principal_keypairs k WHERE k.principal_id = p.id AND k.revoked_at IS NULL) AS key_ids
           FROM principals p WHERE p.tenant_id = $1 AND p.kind = 'service_account' AND p.status <> 'EXPUNGED' ORDER BY lower(p.name)`, [run.tenantId]);
      return table([['name', 'VARCHAR'], ['status', 'VARCHAR'], ['default_role', 'VARCHAR'], ['comment', 'VARCHAR'], ['key_ids', 'VARCHAR[]'], ['is_bootstrap_principal', 'BOOLEAN'], ['created_at', 'TIMESTAMP WITH TIME ZONE']],
        r.rows.map((x) => [x.name, x.status, x.default_role, x.comment, x.key_ids ?? [], x.is_bootstrap_principal, iso(x.created_at)]));
    });
    case 'CreatePat': return createPat(run, stmt.name, stmt.forUser, stmt.ttl, stmt.scope);
    case 'DropPat': return store.transaction(async (tx) => {
      const owner = await patOwner(tx, run, stmt.forUser, 'DROP PERSONAL ACCESS TOKEN');
      const r = await tx.query('UPDATE personal_access_tokens SET revoked_at = $3 WHERE principal_id = $1 AND lower(name) = lower($2) AND revoked_at IS NULL', [owner.id, identName(stmt.name), run.now]);
      if (r.rowCount === 0) {
        if (stmt.ifExists) return ok(`no personal access token ${identName(stmt.name)}; nothing dropped`);
        throw floeError('NOT_FOUND', { what: `personal access token ${identName(stmt.name)} of ${owner.name}` });
      }
      await bumpEpoch(tx, owner.id, run.now);
      await audit(tx, run, 'drop_pat', owner, { name: identName(stmt.name) });
      return ok(`personal access token ${identName(stmt.name)} revoked`);
    });
    case 'ShowPats': return store.transaction(async (tx) => {
      const owner = await patOwner(tx, run, stmt.forUser, 'SHOW PERSONAL ACCESS TOKENS');
      const r = await tx.query<{ name: string; token_prefix: string; scope: string[]; created_at: Date; expires_at: Date | null; last_used_at: Date | null }>(
        'SELECT name, token_prefix, scope, created_at, expires_at, last_used_at FROM personal_access_tokens WHERE principal_id = $1 AND revoked_at IS NULL ORDER BY lower(name)', [owner.id]);
      return table([['name', 'VARCHAR'], ['owner', 'VARCHAR'], ['prefix', 'VARCHAR'], ['scope', 'VARCHAR'], ['created_at', 'TIMESTAMP WITH TIME ZONE'], ['expires_at', 'TIMESTAMP WITH TIME ZONE'], ['last_used_at', 'TIMESTAMP WITH TIME ZONE'], ['expired', 'BOOLEAN']],
        r.rows.map((p) => [p.name, owner.name, p.token_prefix, p.scope.join(' '), iso(p.created_at), iso(p.expires_at), iso(p.last_used_at), p.expires_at !== null && p.expires_at.getTime() <= run.now.getTime()]));
    });
    case 'CreateWebhook': return store.transaction(async (tx) => {
      requireAdmin(await authorityOf(tx, actor), 'CREATE WEBHOOK');
      const name = identName(stmt.name);
      checkName('webhook', name);
      let url: URL;
      try {
        url = new URL(stmt.url);
      } catch {
        throw floeError('INVALID_PARAMETER', { name: 'URL', detail: 'must be an absolute https URL' });
      }
      if (url.protocol !== 'https:') throw floeError('INVALID_PARAMETER', { name: 'URL', detail: 'must use https' });
      if (url.username || url.password) throw floeError('INVALID_PARAMETER', { name: 'URL', detail: 'must not carry credentials' });
      if (!ctx.webhooks.allow_private_targets && (isPrivateAddressLiteral(url.hostname) || /^localhost$/i.test(url.hostname))) {
        throw floeError('INVALID_PARAMETER', { name: 'URL', detail: 'private, loopback and link-local targets are not allowed' });
      }
      if ([...stmt.secret].length < 16) throw floeError('INVALID_PARAMETER', { name: 'SECRET', detail: 'must be at least 16 characters' });
      if (stmt.secret.length > 512) throw floeError('INVALID_PARAMETER', { name: 'SECRET', detail: 'must be at most 512 characters' });
      const events = stmt.events?.map((e) => e.trim());
      const unknown = events?.filter((e) => !isKnownEventSelector(e)) ?? [];
      if (unknown.length > 0) throw floeError('INVALID_PARAMETER', { name: 'EVENTS', detail: `unknown event name or prefix: ${unknown.join(', ')}` });
      const existing = await tx.query<{ id: string }>('SELECT id FROM webhook_subscriptions WHERE tenant_id = $1 AND lower(name) = lower($2) AND dropped_at IS NULL', [run.tenantId, name]);
      if (existing.rows.length > 0) {
        if (stmt.ifNotExists) return ok(`webhook ${name} already exists`);
        throw floeError('DUPLICATE_OBJECT', { kind: 'webhook', name });
      }
      const id = randomUUID();
      await tx.query(
        `INSERT INTO webhook_subscriptions (id, tenant_id, name, url, secret_encrypted, events, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [id, run.tenantId, name, url.toString(), ctx.secrets.seal(stmt.secret, `webhook:${id}`), events ?? null, actor.id, run.now]);
      await audit(tx, run, 'create_webhook', undefined, { name, url: url.toString(), events: events ?? null });
      return ok(`webhook ${name} created`);
    });
    case 'DropWebhook': return store.transaction(async (tx) => {
      requireAdmin(await authorityOf(tx, actor), 'DROP WEBHOOK');
      const name = identName(stmt.name);
      const r = await tx.query<{ id: string }>('UPDATE webhook_subscriptions SET dropped_at = $3 WHERE tenant_id = $1 AND lower(name) = lower($2) AND dropped_at IS NULL RETURNING id', [run.tenantId, name, run.now]);
      const sub = r.rows[0];
      if (!sub) {
        if (stmt.ifExists) return ok(`webhook ${name} does not exist; nothing dropped`);
        throw floeError('NOT_FOUND', { what: `webhook ${name}` });
      }
      await tx.query(`UPDATE webhook_deliveries SET state = 'failed', last_error = 'subscription dropped', updated_at = $2 WHERE subscription_id = $1 AND state IN ('pending', 'retrying')`, [sub.id, run.now]);
      await audit(tx, run, 'drop_webhook', undefined, { name });
      return ok(`webhook ${name} dropped`);
    });
    case 'ShowWebhooks': return store.transaction(async (tx) => {
      requireAdmin(await authorityOf(tx, actor), 'SHOW WEBHOOKS');
      const r = await tx.query<{ name: string; url: string; events: string[] | null; created_at: Date }>(
        'SELECT name, url, events, created_at FROM webhook_subscriptions WHERE tenant_id = $1 AND dropped_at IS NULL ORDER BY lower(name)', [run.tenantId]);
      return table([['name', 'VARCHAR'], ['url', 'VARCHAR'], ['events', 'VARCHAR[]'], ['created_at', 'TIMESTAMP WITH TIME ZONE']],
        r.rows.map((w) => [w.name, w.url, w.events, iso(w.created_at)]));
    });
    case 'GrantManage':
    case 'RevokeManage': return store.transaction(async (tx) => {
      const grant = stmt.kind === 'GrantManage';
      requireAdmin(await authorityOf(tx, actor), `${grant ? 'GRANT' : 'REVOKE'} MANAGE privileges (holders cannot re-delegate)`);
      const u = await requireUser(tx, run.tenantId, stmt.user);
      notDeactivated(u, 'granting privileges');
      const names = stmt.privileges.map(privilegeName);
      for (const p of names) {
        if (grant) {
          await tx.query('INSERT INTO principal_privileges (tenant_id, principal_id, privilege, granted_by, granted_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING', [run.tenantId, u.id, p, actor.id, run.now]);
        } else {
          await tx.query('DELETE FROM principal_privileges WHERE principal_id = $1 AND privilege = $2', [u.id, p]);
        }
      }
      await bumpEpoch(tx, u.id, run.now);
      await audit(tx, run, grant ? 'grant_privilege' : 'revoke_privilege', u, { privileges: names });
      return ok(`${names.join(', ')} ${grant ? 'granted to' : 'revoked from'} ${u.name}`);
    });
    case 'CreateRole': return store.transaction(async (tx) => {
      requireAdmin(await authorityOf(tx, actor), 'CREATE ROLE');
      const name = identName(stmt.name);
      checkName('role', name);
      if (name.toLowerCase() === TENANT_ADMIN_ROLE) throw floeError('DUPLICATE_OBJECT', { kind: 'role', name });
      const exists = await tx.query('SELECT 1 FROM tenant_roles WHERE tenant_id = $1 AND lower(name) = lower($2)', [run.tenantId, name]);
      if (exists.rows.length > 0) {
        if (stmt.ifNotExists) return ok(`role ${name} already exists`);
        throw floeError('DUPLICATE_OBJECT', { kind: 'role', name });
      }
      await tx.query('INSERT INTO tenant_roles (tenant_id, name, created_at, created_by) VALUES ($1, $2, $3, $4)', [run.tenantId, name, run.now, actor.id]);
      await audit(tx, run, 'create_role', undefined, { role: name });
      return ok(`role ${name} created`);
    });
    case 'DropRole': return store.transaction(async (tx) => {
      requireAdmin(await authorityOf(tx, actor), 'DROP ROLE');
      const name = identName(stmt.name);
      if (name.toLowerCase() === TENANT_ADMIN_ROLE) throw floeError('INVALID_STATE', { detail: `${TENANT_ADMIN_ROLE} is built in and cannot be dropped` });
      const r = await tx.query<{ name: string }>('DELETE FROM tenant_roles WHERE tenant_id = $1 AND lower(name) = lower($2) RETURNING name', [run.tenantId, name]);
      const dropped = r.rows[0];
      if (!dropped) {
        if (stmt.ifExists) return ok(`role ${name} does not exist; nothing dropped`);
        throw floeError('NOT_FOUND', { what: `role ${name}` });
      }
      const grants = await tx.query('DELETE FROM principal_roles WHERE tenant_id = $1 AND role = $2', [run.tenantId, dropped.name]);
      await audit(tx, run, 'drop_role', undefined, { role: dropped.name, revoked_grants: grants.rowCount });
      return ok(`role ${dropped.name} dropped`);
    });
    case 'GrantRole':
    case 'RevokeRole': return store.transaction(async (tx) => {
      const grant = stmt.kind === 'GrantRole';
      requireAdmin(await authorityOf(tx, actor), `${grant ? 'GRANT' : 'REVOKE'} ROLE`);
      const roleName = await canonicalRole(tx, run.tenantId, identName(stmt.role));
      const p = await findPrincipal(tx, run.tenantId, identName(stmt.user), true);
      if (!p) throw floeError('NOT_FOUND', { what: `user ${identName(stmt.user)}` });
      if (grant) {
        if (p.status === 'DEACTIVATED') notDeactivated(p, 'granting roles');
        await tx.query('INSERT INTO principal_roles (tenant_id, principal_id, role, granted_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [run.tenantId, p.id, roleName, run.now]);
      } else {
        if (roleName === TENANT_ADMIN_ROLE && p.is_bootstrap_principal) throw floeError('INVALID_STATE', { detail: `${p.name} is the bootstrap administrator and keeps ${TENANT_ADMIN_ROLE}` });
        await tx.query('DELETE FROM principal_roles WHERE principal_id = $1 AND role = $2', [p.id, roleName]);
      }
      await audit(tx, run, grant ? 'grant_role' : 'revoke_role', p, { role: roleName });
      return ok(`role ${roleName} ${grant ? 'granted to' : 'revoked from'} ${p.name}`);
    });
    default:
      return unreachable(stmt);
  }
}

async function canonicalRole(db: SqlExecutor, tenantId: string, name: string): Promise<string> {
  if (name.toLowerCase() === TENANT_ADMIN_ROLE) return TENANT_ADMIN_ROLE;
  const r = await db.query<{ name: string }>('SELECT name FROM tenant_roles WHERE tenant_id = $1 AND lower(name) = lower($2)', [tenantId, name]);
  const row = r.rows[0];
  if (!row) throw floeError('NOT_FOUND', { what: `role ${name}` });
  return row.name;
}

// ------------------------------------------------------------------ users

async function checkPasswordAgainstPolicy(policy: PasswordPolicy, password: string, username: string): Promise<void> {
  const violations = policyViolations(policy, password, username);
  if (violations.length > 0) throw floeError('PASSWORD_POLICY', { detail: violations.join('; ') });
}

/** No reuse of the current and the last N hashes (verified in parallel on the thread pool). */
async function checkHistory(db: SqlExecutor, hasher: PasswordHasher, policy: PasswordPolicy, principalId: string, password: string): Promise<void> {
  if (policy.historyCount <= 0) return;
  const current = (await db.query<{ hash: string }>('SELECT hash FROM principal_passwords WHERE principal_id = $1', [principalId])).rows.map((r) => r.hash);
  const earlier = (await db.query<{ hash: string }>('SELECT hash FROM password_history WHERE principal_id = $1 ORDER BY created_at DESC LIMIT $2', [principalId, policy.historyCount])).rows.map((r) => r.hash);
  const matches = await Promise.all([...current, ...earlier].map((h) => hasher.verify(h, password)));
  if (matches.some(Boolean)) throw floeError('PASSWORD_POLICY', { detail: `it must differ from the last ${policy.historyCount} passwords` });
}

/** Writes a new hash, moving the current one into the history (trimmed to the policy's length). */
export async function writePassword(tx: SqlExecutor, tenantId: string, principalId: string, hash: string, now: Date, policy: PasswordPolicy): Promise<void> {
  const current = (await tx.query<{ hash: string; changed_at: Date }>('SELECT hash, changed_at FROM principal_passwords WHERE principal_id = $1', [principalId])).rows[0];
  if (current) await tx.query('INSERT INTO password_history (principal_id, hash, created_at) VALUES ($1, $2, $3)', [principalId, current.hash, current.changed_at]);
  await tx.query(
    `INSERT INTO principal_passwords (principal_id, tenant_id, hash, changed_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (principal_id) DO UPDATE SET hash = $3, changed_at = $4`, [principalId, tenantId, hash, now]);
  await tx.query(
    `DELETE FROM password_history WHERE principal_id = $1 AND created_at NOT IN
       (SELECT created_at FROM password_history WHERE principal_id = $1 ORDER BY created_at DESC LIMIT $2)`, [principalId, policy.historyCount]);
}

async function mintInvitation(tx: SqlExecutor, run: Run, principalId: string): Promise<{ token: string; url: string; expiresAt: Date }> {
  const token = newInvitationToken();
  const expiresAt = new Date(run.now.getTime() + run.ctx.config.invitation_ttl_hours * 3600_000);
  await tx.query('UPDATE invitations SET revoked_at = $2 WHERE principal_id = $1 AND redeemed_at IS NULL AND revoked_at IS NULL', [principalId, run.now]);
  await tx.query('INSERT INTO invitations (id, tenant_id, principal_id, token_sha256, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [randomUUID(), run.tenantId, principalId, sha256(token), run.now, expiresAt]);
  return { token, url: `${run.ctx.config.invitation_url_base}#token=${token}`, expiresAt };
}

async function createUser(run: Run, nameIdent: Ident, ifNotExists: boolean, o: UserOptions & { email: string }): Promise<PrincipalResult> {
  const { ctx, actor } = run;
  const name = identName(nameIdent);
  checkName('user', name);
  checkEmail(o.email);
  for (const [k, v] of [['DISPLAY_NAME', o.displayName], ['DEFAULT_ROLE', o.defaultRole], ['DEFAULT_WAREHOUSE', o.defaultWarehouse], ['COMMENT', o.comment]] as const) checkText(k, v);
  if (o.identitySource !== undefined && o.identitySource.toUpperCase() !== 'NATIVE') throw floeError('INVALID_PARAMETER', { name: 'IDENTITY_SOURCE', detail: "only 'NATIVE' is supported" });
  // Authorization and existence before the (slow) hash; checked again inside the transaction.
  requirePrivilege(await authorityOf(ctx.store, actor), 'MANAGE USERS', 'CREATE USER');
  const before = await findPrincipal(ctx.store, run.tenantId, name);
  if (before && ifNotExists && before.kind === 'user') return ok(`user ${before.name} already exists`);
  let hash: string | undefined;
  if (o.password !== undefined) {
    await checkPasswordAgainstPolicy(await loadPasswordPolicy(ctx.store, run.tenantId), o.password, name);
    hash = await hasherOf(ctx).hash(o.password);
  }
  return ctx.store.transaction(async (tx) => {
    requirePrivilege(await authorityOf(tx, actor), 'MANAGE USERS', 'CREATE USER');
    const existing = await findPrincipal(tx, run.tenantId, name);
    if (existing) {
      if (ifNotExists && existing.kind === 'user') return ok(`user ${existing.name} already exists`);
      throw floeError('DUPLICATE_OBJECT', { kind: 'principal', name });
    }
    const emailTaken = await tx.query("SELECT 1 FROM principals WHERE tenant_id = $1 AND lower(email) = lower($2) AND status <> 'EXPUNGED'", [run.tenantId, o.email]);
    if (emailTaken.rows.length > 0) throw floeError('DUPLICATE_OBJECT', { kind: 'e-mail address', name: o.email });
    const id = randomUUID();
    const status: PrincipalStatus = hash ? 'ACTIVE' : 'INVITED';
    await tx.query(
      `INSERT INTO principals (id, tenant_id, kind, name, status, email, display_name, default_role, default_warehouse, comment, must_change_password, created_at, updated_at, status_changed_at)
       VALUES ($1, $2, 'user', $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $11)`,
      [id, run.tenantId, name, status, o.email, o.displayName ?? null, o.defaultRole ?? null, o.defaultWarehouse ?? null, o.comment ?? null, o.mustChangePassword ?? false, run.now]);
    if (hash) {
      await tx.query('INSERT INTO principal_passwords (principal_id, tenant_id, hash, changed_at) VALUES ($1, $2, $3, $4)', [id, run.tenantId, hash, run.now]);
      await audit(tx, run, 'create_user', { id, name }, { status });
      return table([['name', 'VARCHAR'], ['status', 'VARCHAR']], [[name, status]]);
    }
    const invitation = await mintInvitation(tx, run, id);
    await audit(tx, run, 'create_user', { id, name }, { status, invitation_expires_at: invitation.expiresAt.toISOString() });
    return table([['name', 'VARCHAR'], ['status', 'VARCHAR'], ['invitation_token', 'VARCHAR'], ['invitation_url', 'VARCHAR'], ['invitation_expires_at', 'TIMESTAMP WITH TIME ZONE']],
      [[name, status, invitation.token, invitation.url, invitation.expiresAt.toISOString()]]);
  });
}

async function alterUserSet(run: Run, nameIdent: Ident, o: UserOptions): Promise<PrincipalResult> {
  const { ctx, actor } = run;
  if (o.email !== undefined) checkEmail(o.email);
  for (const [k, v] of [['DISPLAY_NAME', o.displayName], ['DEFAULT_ROLE', o.defaultRole], ['DEFAULT_WAREHOUSE', o.defaultWarehouse], ['COMMENT', o.comment]] as const) checkText(k, v);
  let hash: string | undefined;
  let policy: PasswordPolicy | undefined;
  if (o.password !== undefined) {
    const a = await authorityOf(ctx.store, actor);
    const target = await requireUser(ctx.store, run.tenantId, nameIdent, false);
    await requireManageableUser(ctx.store, a, target, 'set the password of');
    policy = await loadPasswordPolicy(ctx.store, run.tenantId);
    await checkPasswordAgainstPolicy(policy, o.password, target.name);
    await checkHistory(ctx.store, hasherOf(ctx), policy, target.id, o.password);
    hash = await hasherOf(ctx).hash(o.password);
  }
  return ctx.store.transaction(async (tx) => {
    const a = await authorityOf(tx, actor);
    const u = await requireUser(tx, run.tenantId, nameIdent);
    await requireManageableUser(tx, a, u, 'alter');
    notDeactivated(u, 'altering');
    const fields: string[] = [];
    const set = async (column: string, value: unknown): Promise<void> => {
      await tx.query(`UPDATE principals SET ${column} = $2, updated_at = $3 WHERE id = $1`, [u.id, value, run.now]);
      fields.push(column);
    };
    if (o.email !== undefined) {
      const taken = await tx.query("SELECT 1 FROM principals WHERE tenant_id = $1 AND lower(email) = lower($2) AND status <> 'EXPUNGED' AND id <> $3", [run.tenantId, o.email, u.id]);
      if (taken.rows.length > 0) throw floeError('DUPLICATE_OBJECT', { kind: 'e-mail address', name: o.email });
      await set('email', o.email);
    }
    if (o.displayName !== undefined) await set('display_name', o.displayName);
    if (o.defaultRole !== undefined) await set('default_role', o.defaultRole);
    if (o.defaultWarehouse !== undefined) await set('default_warehouse', o.defaultWarehouse);
    if (o.comment !== undefined) await set('comment', o.comment);
    if (o.mustChangePassword !== undefined) await set('must_change_password', o.mustChangePassword);
    if (o.identitySource !== undefined) throw floeError('INVALID_PARAMETER', { name: 'IDENTITY_SOURCE', detail: 'cannot be changed' });
    let status = u.status;
    if (hash && policy) {
      await writePassword(tx, run.tenantId, u.id, hash, run.now, policy);
      fields.push('password');
      await bumpEpoch(tx, u.id, run.now);
      // An administrator setting the password of an invited user activates it; the invitation dies.
      if (u.status === 'INVITED') {
        status = 'ACTIVE';
        await setStatus(tx, u.id, 'ACTIVE', run.now);
        await tx.query('UPDATE invitations SET revoked_at = $2 WHERE principal_id = $1 AND redeemed_at IS NULL AND revoked_at IS NULL', [u.id, run.now]);
      }
    }
    await audit(tx, run, 'alter_user', u, { fields, status });
    return ok(`user ${u.name} altered`);
  });
}

async function alterUserUnset(run: Run, nameIdent: Ident, fieldsToUnset: readonly UserField[]): Promise<PrincipalResult> {
  const { ctx, actor } = run;
  return ctx.store.transaction(async (tx) => {
    const a = await authorityOf(tx, actor);
    const u = await requireUser(tx, run.tenantId, nameIdent);
    await requireManageableUser(tx, a, u, 'alter');
    notDeactivated(u, 'altering');
    for (const f of fieldsToUnset) {
      switch (f) {
        case 'email':
          throw floeError('INVALID_PARAMETER', { name: 'EMAIL', detail: 'users must have an e-mail address; set another one instead' });
        case 'password':
          await tx.query('DELETE FROM principal_passwords WHERE principal_id = $1', [u.id]);
          await bumpEpoch(tx, u.id, run.now);
          break;
        case 'must_change_password':
          await tx.query('UPDATE principals SET must_change_password = false, updated_at = $2 WHERE id = $1', [u.id, run.now]);
          break;
        case 'display_name':
        case 'default_role':
        case 'default_warehouse':
        case 'comment':
          await tx.query(`UPDATE principals SET ${f} = NULL, updated_at = $2 WHERE id = $1`, [u.id, run.now]);
          break;
        default:
          unreachable(f);
      }
    }
    await audit(tx, run, 'alter_user', u, { unset: fieldsToUnset });
    return ok(`user ${u.name} altered`);
  });
}

async function alterSelfPassword(run: Run, newPassword: string, oldPassword: string): Promise<PrincipalResult> {
  const { ctx, actor } = run;
  if (actor.kind !== 'user') throw floeError('INVALID_STATE', { detail: 'service accounts have no password' });
  const me = await findById(ctx.store, actor.id);
  if (!me) throw floeError('NOT_FOUND', { what: 'the signed-in user' });
  const current = (await ctx.store.query<{ hash: string }>('SELECT hash FROM principal_passwords WHERE principal_id = $1', [me.id])).rows[0];
  if (!current || !await hasherOf(ctx).verify(current.hash, oldPassword)) throw floeError('PERMISSION_DENIED', { detail: 'the OLD PASSWORD is not correct' });
  const policy = await loadPasswordPolicy(ctx.store, run.tenantId);
  await checkPasswordAgainstPolicy(policy, newPassword, me.name);
  await checkHistory(ctx.store, hasherOf(ctx), policy, me.id, newPassword);
  const hash = await hasherOf(ctx).hash(newPassword);
  return ctx.store.transaction(async (tx) => {
    const u = await findById(tx, me.id, true);
    if (!u || u.status !== 'ACTIVE') throw floeError('INVALID_STATE', { detail: 'the user is not ACTIVE' });
    await writePassword(tx, run.tenantId, u.id, hash, run.now, policy);
    await tx.query('UPDATE principals SET must_change_password = false, updated_at = $2 WHERE id = $1', [u.id, run.now]);
    await bumpEpoch(tx, u.id, run.now);
    await audit(tx, run, 'change_password', u, { self: true });
    return ok('password changed; sign in again');
  });
}

/**
 * The tenant and invitee an invitation token names, in whatever state the invitation is
 * (redeemed, revoked, expired): whose history a redemption attempt is filed in. Undefined for a
 * token no invitation has.
 */
export async function invitationHolder(db: SqlExecutor, token: string): Promise<{ tenantId: string; principalId: string; name: string } | undefined> {
  const row = (await db.query<{ tenant_id: string; principal_id: string; name: string }>(
    `SELECT p.tenant_id, p.id AS principal_id, p.name
       FROM invitations i JOIN principals p ON p.id = i.principal_id
      WHERE i.token_sha256 = $1`, [sha256(token)])).rows[0];
  return row ? { tenantId: row.tenant_id, principalId: row.principal_id, name: row.name } : undefined;
}

async function redeemInvitation(ctx: PrincipalContext, token: string, password: string): Promise<PrincipalResult> {
  const now = new Date(ctx.clock.now());
  const digest = sha256(token);
  const find = async (db: SqlExecutor, lock: boolean): Promise<{ invitation_id: string; principal_id: string; tenant_id: string; name: string } | undefined> => (await db.query<{ invitation_id: string; principal_id: string; tenant_id: string; name: string }>(
    `SELECT i.id AS invitation_id, p.id AS principal_id, p.tenant_id, p.name
       FROM invitations i JOIN principals p ON p.id = i.principal_id
      WHERE i.token_sha256 = $1 AND i.redeemed_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > $2 AND p.status = 'INVITED'${lock ? ' FOR UPDATE OF i' : ''}`,
    [digest, now])).rows[0];
  const found = await find(ctx.store, false);
  if (!found) throw floeError('InvalidInvitation');
  const policy = await loadPasswordPolicy(ctx.store, found.tenant_id);
  await checkPasswordAgainstPolicy(policy, password, found.name);
  const hash = await hasherOf(ctx).hash(password);
  return ctx.store.transaction(async (tx) => {
    const inv = await find(tx, true);
    if (!inv) throw floeError('InvalidInvitation');
    const claimed = await tx.query('UPDATE invitations SET redeemed_at = $2 WHERE id = $1 AND redeemed_at IS NULL', [inv.invitation_id, now]);
    if (claimed.rowCount !== 1) throw floeError('InvalidInvitation');
    await writePassword(tx, inv.tenant_id, inv.principal_id, hash, now, policy);
    await tx.query('UPDATE principals SET status = $2, must_change_password = false, status_changed_at = $3, updated_at = $3 WHERE id = $1', [inv.principal_id, 'ACTIVE', now]);
    await bumpEpoch(tx, inv.principal_id, now);
    const who = { id: inv.principal_id, name: inv.name };
    await recordAudit(tx, { tenantId: inv.tenant_id, actor: who, target: who, type: 'redeem_invitation', details: {}, at: now });
    return table([['name', 'VARCHAR'], ['status', 'VARCHAR'], ['tenant', 'VARCHAR']], [[inv.name, 'ACTIVE', inv.tenant_id]]);
  });
}

/**
 * Clears a principal down to a tombstone: personal data rewritten, credentials, tokens,
 * invitations, keys, grants removed; the row stays (audit rows point at it) and the name is freed.
 * Returns the tombstone's name. Shared by EXPUNGE USER, DROP SERVICE ACCOUNT and the sweeper.
 */
export async function tombstonePrincipal(tx: SqlExecutor, id: string, now: Date, reason: string, rewriteName = true): Promise<string> {
  const tombstone = `expunged-${id}`;
  await tx.query('DELETE FROM principal_passwords WHERE principal_id = $1', [id]);
  await tx.query('DELETE FROM password_history WHERE principal_id = $1', [id]);
  await tx.query('DELETE FROM principal_mfa WHERE principal_id = $1', [id]);
  await tx.query('DELETE FROM mfa_used_codes WHERE principal_id = $1', [id]);
  await tx.query('DELETE FROM principal_recovery_codes WHERE principal_id = $1', [id]);
  await tx.query('DELETE FROM principal_passkeys WHERE principal_id = $1', [id]);
  await tx.query('DELETE FROM webauthn_challenges WHERE principal_id = $1', [id]);
  await tx.query('DELETE FROM invitations WHERE principal_id = $1', [id]);
  await tx.query('DELETE FROM personal_access_tokens WHERE principal_id = $1', [id]);
  await tx.query('UPDATE principal_keypairs SET revoked_at = $2 WHERE principal_id = $1 AND revoked_at IS NULL', [id, now]);
  await tx.query('UPDATE oauth_clients SET revoked_at = $2 WHERE principal_id = $1 AND revoked_at IS NULL', [id, now]);
  await tx.query('UPDATE refresh_tokens SET revoked_at = $2 WHERE principal_id = $1 AND revoked_at IS NULL', [id, now]);
  await tx.query('DELETE FROM principal_roles WHERE principal_id = $1', [id]);
  await tx.query('DELETE FROM principal_privileges WHERE principal_id = $1', [id]);
  // What an identity provider pushed (external id, name parts, every e-mail) is personal data too.
  await tx.query('DELETE FROM scim_users WHERE principal_id = $1', [id]);
  if (rewriteName) await tx.query('UPDATE principals SET name = $2 WHERE id = $1', [id, tombstone]);
  await tx.query(
    `UPDATE principals SET status = 'EXPUNGED', email = NULL, display_name = NULL, default_role = NULL,
            default_warehouse = NULL, comment = NULL, must_change_password = false, login_failures = 0, last_failed_login_at = NULL,
            last_login_at = NULL, legal_hold_reason = NULL, expunged_at = $2, expunge_reason = $3, status_changed_at = $2, updated_at = $2,
            session_epoch = session_epoch + 1
      WHERE id = $1`, [id, now, reason]);
  return rewriteName ? tombstone : (await findById(tx, id))?.name ?? tombstone;
}

async function showUsers(run: Run, like: string | undefined, status: string | undefined): Promise<PrincipalResult> {
  const { ctx, actor } = run;
  requirePrivilege(await authorityOf(ctx.store, actor), 'MANAGE USERS', 'SHOW USERS');
  const params: unknown[] = [run.tenantId];
  let where = "tenant_id = $1 AND kind = 'user' AND status <> 'EXPUNGED'";
  if (like !== undefined) {
    params.push(like);
    where += ` AND name ILIKE $${params.length}`;
  }
  if (status !== undefined && status !== 'LOCKED') {
    params.push(status);
    where += ` AND status = $${params.length}`;
  }
  const rows = (await ctx.store.query<PrincipalRow & { mfa: boolean }>(
    `SELECT ${PRINCIPAL_COLUMNS}, EXISTS (SELECT 1 FROM principal_mfa m WHERE m.principal_id = principals.id AND m.verified_at IS NOT NULL) AS mfa
       FROM principals WHERE ${where} ORDER BY lower(name)`, params)).rows;
  const nowMs = run.now.getTime();
  const shown = status === 'LOCKED' ? rows.filter((u) => lockedAt(u, ctx, nowMs)) : rows;
  return table([
    ['name', 'VARCHAR'], ['status', 'VARCHAR'], ['locked', 'BOOLEAN'], ['email', 'VARCHAR'], ['display_name', 'VARCHAR'], ['default_role', 'VARCHAR'],
    ['default_warehouse', 'VARCHAR'], ['must_change_password', 'BOOLEAN'], ['mfa_enabled', 'BOOLEAN'], ['legal_hold', 'BOOLEAN'],
    ['comment', 'VARCHAR'], ['created_at', 'TIMESTAMP WITH TIME ZONE'], ['last_login_at', 'TIMESTAMP WITH TIME ZONE'],
  ], shown.map((u) => [u.name, u.status, lockedAt(u, ctx, nowMs), u.email, u.display_name, u.default_role, u.default_warehouse, u.must_change_password, u.mfa, u.legal_hold, u.comment, iso(u.created_at), iso(u.last_login_at)]));
}

async function describeUser(run: Run, nameIdent: Ident): Promise<PrincipalResult> {
  const { ctx, actor } = run;
  const u = await requireUser(ctx.store, run.tenantId, nameIdent, false);
  if (u.id !== actor.id) requirePrivilege(await authorityOf(ctx.store, actor), 'MANAGE USERS', 'DESCRIBE USER');
  const mfa = (await ctx.store.query<{ verified_at: Date | null }>('SELECT verified_at FROM principal_mfa WHERE principal_id = $1', [u.id])).rows[0];
  return table([
    ['name', 'VARCHAR'], ['status', 'VARCHAR'], ['locked', 'BOOLEAN'], ['email', 'VARCHAR'], ['display_name', 'VARCHAR'], ['default_role', 'VARCHAR'],
    ['default_warehouse', 'VARCHAR'], ['comment', 'VARCHAR'], ['must_change_password', 'BOOLEAN'], ['identity_source', 'VARCHAR'],
    ['session_epoch', 'BIGINT'], ['login_failures', 'INTEGER'], ['last_login_at', 'TIMESTAMP WITH TIME ZONE'], ['mfa_enabled', 'BOOLEAN'],
    ['legal_hold', 'BOOLEAN'], ['legal_hold_reason', 'VARCHAR'], ['is_bootstrap_principal', 'BOOLEAN'],
    ['created_at', 'TIMESTAMP WITH TIME ZONE'], ['updated_at', 'TIMESTAMP WITH TIME ZONE'], ['status_changed_at', 'TIMESTAMP WITH TIME ZONE'], ['deactivated_at', 'TIMESTAMP WITH TIME ZONE'],
  ], [[u.name, u.status, lockedAt(u, ctx, run.now.getTime()), u.email, u.display_name, u.default_role, u.default_warehouse, u.comment, u.must_change_password, u.identity_source,
    Number(u.session_epoch), u.login_failures, iso(u.last_login_at), mfa?.verified_at != null, u.legal_hold, u.legal_hold_reason, u.is_bootstrap_principal,
    iso(u.created_at), iso(u.updated_at), iso(u.status_changed_at), iso(u.deactivated_at)]]);
}

// ------------------------------------------------------------------ MFA

/**
 * The SQL MFA statements need a sign-in with the password (and, when one is on, the current
 * second factor) no longer ago than `mfa_recent_seconds`.
 */
export async function requireRecentStrongSignIn(db: SqlExecutor, run: Run): Promise<{ enrolled: boolean }> {
  const { actor, ctx } = run;
  if (actor.kind !== 'user') throw floeError('INVALID_STATE', { detail: 'MFA applies to users' });
  const mfa = (await db.query<{ verified_at: Date | null }>('SELECT verified_at FROM principal_mfa WHERE principal_id = $1', [actor.id])).rows[0];
  const enrolled = mfa?.verified_at != null;
  // Any second factor the account has (an authenticator or a passkey) must have been used.
  const hasFactor = enrolled || (await db.query('SELECT 1 FROM principal_passkeys WHERE principal_id = $1 LIMIT 1', [actor.id])).rows.length > 0;
  const age = run.now.getTime() / 1000 - actor.authTime;
  const withPassword = actor.authMethod === 'password' && actor.amr.includes('pwd');
  const withFactor = !hasFactor || actor.amr.includes('mfa');
  if (!withPassword || !withFactor || age > ctx.config.mfa_recent_seconds || age < -60) {
    throw floeError('REAUTHENTICATION_REQUIRED', { detail: `MFA statements are accepted only within ${Math.round(ctx.config.mfa_recent_seconds / 60)} minutes of a sign-in with the password${hasFactor ? ' and the current second factor' : ''}` });
  }
  return { enrolled };
}

/** Whether the account must keep a second factor: administrators always, others by tenant policy. */
export async function mfaRequiredFor(db: SqlExecutor, tenantId: string, principalId: string): Promise<boolean> {
  const admin = await db.query('SELECT 1 FROM principal_roles WHERE principal_id = $1 AND role = $2', [principalId, TENANT_ADMIN_ROLE]);
  if (admin.rows.length > 0) return true;
  return (await loadPasswordPolicy(db, tenantId)).requireMfa;
}

/** Accepts a code once: its time step is recorded, and a recorded step is refused. */
async function consumeTotp(tx: SqlExecutor, principalId: string, secret: string, code: string, now: Date): Promise<boolean> {
  const step = matchTotp(secret, code, Math.floor(now.getTime() / 1000));
  if (step === undefined) return false;
  const r = await tx.query('INSERT INTO mfa_used_codes (principal_id, time_step, used_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [principalId, step, now]);
  await tx.query('DELETE FROM mfa_used_codes WHERE principal_id = $1 AND time_step < $2', [principalId, step - 4]);
  return r.rowCount === 1;
}

async function enrollMfa(run: Run): Promise<PrincipalResult> {
  const { ctx, actor } = run;
  return ctx.store.transaction(async (tx) => {
    const me = await findById(tx, actor.id, true);
    if (!me) throw floeError('NOT_FOUND', { what: 'the signed-in user' });
    const { enrolled } = await requireRecentStrongSignIn(tx, run);
    if (enrolled) throw floeError('INVALID_STATE', { detail: 'a TOTP authenticator is already enrolled; DISABLE it first' });
    const secret = newTotpSecret();
    await tx.query(
      `INSERT INTO principal_mfa (principal_id, tenant_id, method, secret_encrypted, created_at) VALUES ($1, $2, 'TOTP', $3, $4)
       ON CONFLICT (principal_id) DO UPDATE SET secret_encrypted = $3, created_at = $4, verified_at = NULL`,
      [me.id, run.tenantId, ctx.secrets.seal(secret, `totp:${me.id}`), run.now]);
    await audit(tx, run, 'enroll_mfa', me, { method: 'TOTP' });
    return table([['secret', 'VARCHAR'], ['otpauth_uri', 'VARCHAR'], ['next_step', 'VARCHAR']],
      [[secret, totpUri(secret, ctx.config.totp_issuer, `${run.tenantId}:${me.name}`), "ALTER USER SELF VERIFY MFA TOTP '<code>'"]]);
  });
}

async function verifyMfa(run: Run, code: string): Promise<PrincipalResult> {
  return (await turnOnTotp(run, code, async () => undefined)).result;
}

/**
 * Turns a pending TOTP enrolment on (ALTER USER SELF VERIFY MFA TOTP), running `alsoInTransaction`
 * in the same transaction: the console issues recovery codes there, so an authenticator never
 * comes on through it without them.
 */
export async function turnOnTotp<T>(run: Run, code: string, alsoInTransaction: (tx: SqlExecutor, me: { id: string; name: string }) => Promise<T>): Promise<{ result: PrincipalResult; also: T }> {
  const { ctx, actor } = run;
  return ctx.store.transaction(async (tx) => {
    const me = await findById(tx, actor.id, true);
    if (!me) throw floeError('NOT_FOUND', { what: 'the signed-in user' });
    await requireRecentStrongSignIn(tx, run);
    const row = (await tx.query<{ secret_encrypted: string; verified_at: Date | null }>('SELECT secret_encrypted, verified_at FROM principal_mfa WHERE principal_id = $1', [me.id])).rows[0];
    if (!row) throw floeError('INVALID_STATE', { detail: 'no TOTP enrolment is pending; run ALTER USER SELF ENROLL MFA TOTP first' });
    if (row.verified_at) throw floeError('INVALID_STATE', { detail: 'the TOTP authenticator is already verified' });
    if (!await consumeTotp(tx, me.id, ctx.secrets.open(row.secret_encrypted, `totp:${me.id}`), code, run.now)) {
      throw floeError('INVALID_PARAMETER', { name: 'TOTP code', detail: 'the code is not valid (or was already used)' });
    }
    await tx.query('UPDATE principal_mfa SET verified_at = $2 WHERE principal_id = $1', [me.id, run.now]);
    await bumpEpoch(tx, me.id, run.now);
    await audit(tx, run, 'verify_mfa', me, { method: 'TOTP' });
    const also = await alsoInTransaction(tx, me);
    return { result: ok('TOTP authenticator verified and on; sign in again with the password and a code'), also };
  });
}

async function disableMfa(run: Run, code: string): Promise<PrincipalResult> {
  const { ctx, actor } = run;
  return ctx.store.transaction(async (tx) => {
    const me = await findById(tx, actor.id, true);
    if (!me) throw floeError('NOT_FOUND', { what: 'the signed-in user' });
    const row = (await tx.query<{ secret_encrypted: string; verified_at: Date | null }>('SELECT secret_encrypted, verified_at FROM principal_mfa WHERE principal_id = $1', [me.id])).rows[0];
    if (!row?.verified_at) throw floeError('INVALID_STATE', { detail: 'no TOTP authenticator is on' });
    await requireRecentStrongSignIn(tx, run);
    // The last second factor may not go while one is required; a passkey left keeps one.
    const passkeyLeft = (await tx.query('SELECT 1 FROM principal_passkeys WHERE principal_id = $1 LIMIT 1', [me.id])).rows.length > 0;
    if (!passkeyLeft && await mfaRequiredFor(tx, run.tenantId, me.id)) throw floeError('INVALID_STATE', { detail: 'a second factor is required for this account and cannot be turned off' });
    if (!await consumeTotp(tx, me.id, ctx.secrets.open(row.secret_encrypted, `totp:${me.id}`), code, run.now)) {
      throw floeError('INVALID_PARAMETER', { name: 'TOTP code', detail: 'the code is not valid (or was already used)' });
    }
    await tx.query('DELETE FROM principal_mfa WHERE principal_id = $1', [me.id]);
    // Recovery codes stand in for the authenticator: they go with it.
    await tx.query('DELETE FROM principal_recovery_codes WHERE principal_id = $1', [me.id]);
    await bumpEpoch(tx, me.id, run.now);
    await audit(tx, run, 'disable_mfa', me, { method: 'TOTP' });
    return ok('TOTP authenticator turned off');
  });
}

// ------------------------------------------------------------------ PATs

async function patOwner(tx: SqlExecutor, run: Run, forUser: Ident | undefined, what: string): Promise<PrincipalRow> {
  if (forUser === undefined || identName(forUser).toLowerCase() === run.actor.name.toLowerCase()) {
    const me = await findById(tx, run.actor.id);
    if (!me) throw floeError('NOT_FOUND', { what: 'the signed-in principal' });
    return me;
  }
  requirePrivilege(await authorityOf(tx, run.actor), 'MANAGE PATS', `${what} FOR another principal`);
  const p = await findPrincipal(tx, run.tenantId, identName(forUser), true);
  if (!p) throw floeError('NOT_FOUND', { what: `user ${identName(forUser)}` });
  return p;
}

/** '<n> days' (also day/d, hours/h); at most the configured maximum. */
export function parsePatTtl(ttl: string | undefined, maxDays: number): number {
  if (ttl === undefined) return maxDays * 86400_000;
  const m = /^\s*(\d{1,6})\s*(days?|d|hours?|h)\s*$/i.exec(ttl);
  if (!m) throw floeError('INVALID_PARAMETER', { name: 'TTL', detail: "must look like '30 days' or '12 hours'" });
  const n = Number(m[1]);
  const ms = /^h/i.test(m[2]!) ? n * 3600_000 : n * 86400_000;
  if (ms <= 0) throw floeError('INVALID_PARAMETER', { name: 'TTL', detail: 'must be positive' });
  if (ms > maxDays * 86400_000) throw floeError('INVALID_PARAMETER', { name: 'TTL', detail: `at most ${maxDays} days` });
  return ms;
}

async function createPat(run: Run, nameIdent: Ident, forUser: Ident | undefined, ttl: string | undefined, scope: string | undefined): Promise<PrincipalResult> {
  const { ctx } = run;
  const name = identName(nameIdent);
  checkName('personal access token', name);
  const ttlMs = parsePatTtl(ttl, ctx.config.pat_max_ttl_days);
  const requested = scope === undefined ? undefined : [...new Set(scope.split(/\s+/).filter((w) => w.length > 0))];
  const bad = requested?.filter((w) => !isScope(w)) ?? [];
  if (bad.length > 0 || requested?.length === 0) throw floeError('INVALID_PARAMETER', { name: 'SCOPE', detail: bad.length > 0 ? `unknown scope ${bad.join(', ')} (known: ${ALL_SCOPES.join(' ')})` : 'must name at least one scope' });
  return ctx.store.transaction(async (tx) => {
    const owner = await patOwner(tx, run, forUser, 'CREATE PERSONAL ACCESS TOKEN');
    // A PAT for oneself stays within the scopes of the token that creates it (no escalation from a
    // narrow client to a wide PAT); an administrator issuing for another principal chooses freely.
    const self = owner.id === run.actor.id;
    const held = self && run.actor.scopes !== undefined ? ALL_SCOPES.filter((s) => run.actor.scopes!.includes(s)) : [...ALL_SCOPES];
    const words = requested ?? held;
    const beyond = words.filter((w) => !held.includes(w as (typeof ALL_SCOPES)[number]));
    if (beyond.length > 0) throw floeError('PERMISSION_DENIED', { detail: `the PAT cannot carry scopes the creating token lacks: ${beyond.join(', ')}` });
    if (words.length === 0) throw floeError('INVALID_PARAMETER', { name: 'SCOPE', detail: 'must name at least one scope' });
    const provisionedWithPats = owner.status === 'PROVISIONED' && (await loadProvisioningPolicy(tx, run.tenantId)).has('pat');
    if (owner.status !== 'ACTIVE' && !provisionedWithPats) {
      throw floeError('INVALID_STATE', { detail: owner.status === 'PROVISIONED' ? `${owner.name} is PROVISIONED and the tenant does not allow personal access tokens for provisioned users` : `${owner.name} is ${owner.status}` });
    }
    const dup = await tx.query('SELECT 1 FROM personal_access_tokens WHERE principal_id = $1 AND lower(name) = lower($2) AND revoked_at IS NULL', [owner.id, name]);
    if (dup.rows.length > 0) throw floeError('DUPLICATE_OBJECT', { kind: 'personal access token', name });
    const token = newPat();
    const expiresAt = new Date(run.now.getTime() + ttlMs);
    await tx.query(
      `INSERT INTO personal_access_tokens (id, tenant_id, principal_id, name, token_sha256, token_prefix, scope, created_by, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [randomUUID(), run.tenantId, owner.id, name, sha256(token), patDisplayPrefix(token), words, run.actor.id, run.now, expiresAt]);
    await audit(tx, run, 'create_pat', owner, { name, scope: words.join(' '), expires_at: expiresAt.toISOString() });
    return table([['name', 'VARCHAR'], ['owner', 'VARCHAR'], ['token', 'VARCHAR'], ['scope', 'VARCHAR'], ['expires_at', 'TIMESTAMP WITH TIME ZONE']],
      [[name, owner.name, token, words.join(' '), expiresAt.toISOString()]]);
  });
}

