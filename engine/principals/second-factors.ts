/**
 * Second factors beyond the SQL statements, for the web console: recovery codes (ten one-time
 * codes shown once when an authenticator is turned on through the console, stored as SHA-256
 * hashes, each accepted once, all replaced when regenerated) and the checks sign-in makes on them.
 * Passkeys are in `passkeys.ts`. Every change bumps the user's `session_epoch` and is audited,
 * like the SQL MFA statements.
 */
import { randomBytes } from 'node:crypto';
import type { SqlExecutor } from '../../catalog/store/meta-store.js';
import { floeError } from '../../grammar/errors.js';
import { sha256 } from './secrets.js';
import type { PrincipalContext } from './settings.js';
import { audit, bumpEpoch, findById, requireRecentStrongSignIn, turnOnTotp, type Run } from './statements.js';

export const RECOVERY_CODE_COUNT = 10;
/** Base32 without look-alikes' ambiguity (RFC 4648 alphabet, lower case): 10 characters = 50 bits. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** `xxxxx-xxxxx`: 50 random bits, typed by hand when the authenticator is lost. */
function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  let out = '';
  for (let i = 0; i < 10; i++) out += ALPHABET[bytes[i]! & 31];
  return `${out.slice(0, 5)}-${out.slice(5)}`;
}

/** How a typed code is compared: case, spaces and dashes do not matter. */
function normalize(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

/** Replaces every recovery code of the user with ten new ones and returns them (the only time they are seen). */
export async function replaceRecoveryCodes(tx: SqlExecutor, tenantId: string, principalId: string, now: Date): Promise<string[]> {
  await tx.query('DELETE FROM principal_recovery_codes WHERE principal_id = $1', [principalId]);
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  for (const code of codes) {
    await tx.query('INSERT INTO principal_recovery_codes (principal_id, tenant_id, code_sha256, created_at) VALUES ($1, $2, $3, $4)',
      [principalId, tenantId, sha256(normalize(code)).toString('hex'), now]);
  }
  return codes;
}

/** Uses up one recovery code: true once per code, false for an unknown or used one. */
export async function consumeRecoveryCode(db: SqlExecutor, principalId: string, code: string, now: Date): Promise<boolean> {
  const n = normalize(code);
  if (!/^[a-z2-7]{10}$/.test(n)) return false;
  const r = await db.query('UPDATE principal_recovery_codes SET used_at = $3 WHERE principal_id = $1 AND code_sha256 = $2 AND used_at IS NULL', [principalId, sha256(n).toString('hex'), now]);
  return r.rowCount === 1;
}

/** How many unused recovery codes the user has left. */
export async function recoveryCodesLeft(db: SqlExecutor, principalId: string): Promise<number> {
  const r = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM principal_recovery_codes WHERE principal_id = $1 AND used_at IS NULL', [principalId]);
  return Number(r.rows[0]?.n ?? 0);
}

function runOf(ctx: PrincipalContext): Run {
  if (!ctx.actor || ctx.tenantId === undefined) throw floeError('NOT_AUTHENTICATED', { detail: 'a bearer token is needed' });
  return { ctx, tenantId: ctx.tenantId, actor: ctx.actor, now: new Date(ctx.clock.now()) };
}

/**
 * The console's "turn on the authenticator": ALTER USER SELF VERIFY MFA TOTP plus ten recovery
 * codes, in one transaction. Allowed to a token restricted to enrolling a second factor.
 */
export async function turnOnTotpWithRecoveryCodes(ctx: PrincipalContext, code: string): Promise<string[]> {
  const run = runOf(ctx);
  if (run.actor.restriction === 'change_password') throw floeError('PERMISSION_DENIED', { detail: 'the password must be changed first' });
  const { also } = await turnOnTotp(run, code, (tx, me) => replaceRecoveryCodes(tx, run.tenantId, me.id, run.now));
  return also;
}

/** Regenerates the recovery codes (the old ones stop working); needs a recent sign-in with the second factor. */
export async function regenerateRecoveryCodes(ctx: PrincipalContext): Promise<string[]> {
  const run = runOf(ctx);
  if (run.actor.restriction) throw floeError('PERMISSION_DENIED', { detail: 'finish signing in first' });
  return ctx.store.transaction(async (tx) => {
    const me = await findById(tx, run.actor.id, true);
    if (!me) throw floeError('NOT_FOUND', { what: 'the signed-in user' });
    const { enrolled } = await requireRecentStrongSignIn(tx, run);
    if (!enrolled) throw floeError('INVALID_STATE', { detail: 'recovery codes go with an authenticator app; turn one on first' });
    const codes = await replaceRecoveryCodes(tx, run.tenantId, me.id, run.now);
    await bumpEpoch(tx, me.id, run.now);
    await audit(tx, run, 'regenerate_recovery_codes', me, { count: codes.length });
    return codes;
  });
}
