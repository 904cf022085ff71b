/**
 * Passkeys (WebAuthn) as a second factor, through @simplewebauthn/server. A passkey never stands
 * in for the password (the spec: "the password is still required"): sign-in checks the password
 * first, then an assertion from one of *that user's* passkeys.
 *
 * Challenges are random, stored (`webauthn_challenges`, five minutes) and consumed by the
 * ceremony that answers them, atomically, so an assertion or attestation is accepted once: a
 * replayed response finds its challenge gone. The signature counter is also checked (a counter
 * that does not move up, for an authenticator that counts, is refused). The relying party is the
 * console's own origin (`RelyingParty`, from the request), so a passkey made for one Floe address
 * does not sign in at another.
 */
import {
  generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse,
  type AuthenticationResponseJSON, type PublicKeyCredentialCreationOptionsJSON, type PublicKeyCredentialRequestOptionsJSON, type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { SqlExecutor } from '../../catalog/store/meta-store.js';
import { floeError } from '../../grammar/errors.js';
import type { PrincipalContext } from './settings.js';
import { audit, bumpEpoch, findById, mfaRequiredFor, requireRecentStrongSignIn, type Run } from './statements.js';

/** Who the passkeys are for: the host name the console is served at and its origin. */
export interface RelyingParty {
  readonly id: string;
  readonly origin: string;
  readonly name: string;
}

export const CHALLENGE_TTL_MS = 5 * 60_000;
const MAX_NAME = 64;

export interface PasskeyInfo {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly last_used_at: string | null;
}

interface PasskeyRow { credential_id: string; principal_id: string; name: string; public_key: string; sign_count: string | number; transports: string; created_at: Date; last_used_at: Date | null }

function runOf(ctx: PrincipalContext): Run {
  if (!ctx.actor || ctx.tenantId === undefined) throw floeError('NOT_AUTHENTICATED', { detail: 'a bearer token is needed' });
  if (ctx.actor.kind !== 'user') throw floeError('INVALID_STATE', { detail: 'passkeys are for users' });
  if (ctx.actor.restriction === 'change_password') throw floeError('PERMISSION_DENIED', { detail: 'the password must be changed first' });
  return { ctx, tenantId: ctx.tenantId, actor: ctx.actor, now: new Date(ctx.clock.now()) };
}

async function storeChallenge(db: SqlExecutor, tenantId: string, principalId: string, purpose: 'register' | 'authenticate', challenge: string, now: Date): Promise<void> {
  await db.query('DELETE FROM webauthn_challenges WHERE principal_id = $1 AND expires_at < $2', [principalId, now]);
  await db.query('INSERT INTO webauthn_challenges (challenge, tenant_id, principal_id, purpose, expires_at) VALUES ($1, $2, $3, $4, $5)',
    [challenge, tenantId, principalId, purpose, new Date(now.getTime() + CHALLENGE_TTL_MS)]);
}

/** Uses up a challenge issued to this principal for this purpose: true once. */
async function consumeChallenge(db: SqlExecutor, principalId: string, purpose: 'register' | 'authenticate', challenge: string, now: Date): Promise<boolean> {
  const r = await db.query('DELETE FROM webauthn_challenges WHERE challenge = $1 AND principal_id = $2 AND purpose = $3 AND expires_at > $4', [challenge, principalId, purpose, now]);
  return r.rowCount === 1;
}

async function passkeysOf(db: SqlExecutor, principalId: string): Promise<PasskeyRow[]> {
  return (await db.query<PasskeyRow>('SELECT * FROM principal_passkeys WHERE principal_id = $1 ORDER BY created_at', [principalId])).rows;
}

/** Whether the user has at least one passkey. */
export async function hasPasskey(db: SqlExecutor, principalId: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM principal_passkeys WHERE principal_id = $1 LIMIT 1', [principalId])).rows.length > 0;
}

export async function listPasskeys(ctx: PrincipalContext): Promise<PasskeyInfo[]> {
  const run = runOf(ctx);
  return (await passkeysOf(ctx.store, run.actor.id)).map((p) => ({ id: p.credential_id, name: p.name, created_at: p.created_at.toISOString(), last_used_at: p.last_used_at?.toISOString() ?? null }));
}

/** Step 1 of adding a passkey: the options for `navigator.credentials.create`. */
export async function passkeyRegistrationOptions(ctx: PrincipalContext, rp: RelyingParty): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const run = runOf(ctx);
  return ctx.store.transaction(async (tx) => {
    await requireRecentStrongSignIn(tx, run);
    const existing = await passkeysOf(tx, run.actor.id);
    const options = await generateRegistrationOptions({
      rpName: rp.name, rpID: rp.id, userName: `${run.tenantId}:${run.actor.name}`, userDisplayName: run.actor.name,
      userID: new TextEncoder().encode(run.actor.id), attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: splitTransports(p.transports) })),
      authenticatorSelection: { residentKey: 'discouraged', userVerification: 'preferred' },
    });
    await storeChallenge(tx, run.tenantId, run.actor.id, 'register', options.challenge, run.now);
    return options;
  });
}

function splitTransports(t: string): ('ble' | 'cable' | 'hybrid' | 'internal' | 'nfc' | 'smart-card' | 'usb')[] {
  return t.split(',').filter((x) => x.length > 0) as ('usb')[];
}

function checkName(name: unknown): string {
  const n = typeof name === 'string' ? name.trim() : '';
  if (n.length === 0 || n.length > MAX_NAME) throw floeError('INVALID_PARAMETER', { name: 'name', detail: `a passkey name of 1 to ${MAX_NAME} characters` });
  return n;
}

/** Step 2: verifies the authenticator's answer and keeps the passkey; bumps the epoch, audited. */
export async function registerPasskey(ctx: PrincipalContext, rp: RelyingParty, name: unknown, response: RegistrationResponseJSON): Promise<PasskeyInfo> {
  const run = runOf(ctx);
  const passkeyName = checkName(name);
  return ctx.store.transaction(async (tx) => {
    const me = await findById(tx, run.actor.id, true);
    if (!me) throw floeError('NOT_FOUND', { what: 'the signed-in user' });
    await requireRecentStrongSignIn(tx, run);
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response, expectedChallenge: (c) => consumeChallenge(tx, me.id, 'register', c, run.now),
        expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false,
      });
    } catch (e) {
      throw floeError('INVALID_PARAMETER', { name: 'passkey', detail: `the authenticator's answer was not accepted: ${(e as Error).message}` });
    }
    if (!verified.verified) throw floeError('INVALID_PARAMETER', { name: 'passkey', detail: "the authenticator's answer was not accepted" });
    const cred = verified.registrationInfo.credential;
    const taken = await tx.query('SELECT 1 FROM principal_passkeys WHERE credential_id = $1', [cred.id]);
    if (taken.rows.length > 0) throw floeError('INVALID_STATE', { detail: 'this passkey is already registered' });
    await tx.query(
      'INSERT INTO principal_passkeys (credential_id, principal_id, tenant_id, name, public_key, sign_count, transports, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [cred.id, me.id, run.tenantId, passkeyName, Buffer.from(cred.publicKey).toString('base64url'), cred.counter, (cred.transports ?? []).join(','), run.now]);
    await bumpEpoch(tx, me.id, run.now);
    await audit(tx, run, 'add_passkey', me, { passkey: passkeyName });
    return { id: cred.id, name: passkeyName, created_at: run.now.toISOString(), last_used_at: null };
  });
}

/** Removes one of the caller's passkeys; refused when it is the last second factor and one is required. */
export async function removePasskey(ctx: PrincipalContext, credentialId: string): Promise<void> {
  const run = runOf(ctx);
  await ctx.store.transaction(async (tx) => {
    const me = await findById(tx, run.actor.id, true);
    if (!me) throw floeError('NOT_FOUND', { what: 'the signed-in user' });
    await requireRecentStrongSignIn(tx, run);
    const all = await passkeysOf(tx, me.id);
    const target = all.find((p) => p.credential_id === credentialId);
    if (!target) throw floeError('NOT_FOUND', { what: 'passkey' });
    const totpOn = (await tx.query('SELECT 1 FROM principal_mfa WHERE principal_id = $1 AND verified_at IS NOT NULL', [me.id])).rows.length > 0;
    if (all.length === 1 && !totpOn && await mfaRequiredFor(tx, run.tenantId, me.id)) {
      throw floeError('INVALID_STATE', { detail: 'this is your last second factor and one is required for this account; add another first' });
    }
    await tx.query('DELETE FROM principal_passkeys WHERE credential_id = $1 AND principal_id = $2', [credentialId, me.id]);
    await bumpEpoch(tx, me.id, run.now);
    await audit(tx, run, 'remove_passkey', me, { passkey: target.name });
  });
}

/** For sign-in, after the password: options for `navigator.credentials.get` over the user's passkeys. */
export async function passkeyAuthenticationOptions(db: SqlExecutor, rp: RelyingParty, tenantId: string, principalId: string, now: Date): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
  const keys = await passkeysOf(db, principalId);
  if (keys.length === 0) return undefined;
  const options = await generateAuthenticationOptions({
    rpID: rp.id, userVerification: 'preferred', timeout: CHALLENGE_TTL_MS,
    allowCredentials: keys.map((k) => ({ id: k.credential_id, transports: splitTransports(k.transports) })),
  });
  await storeChallenge(db, tenantId, principalId, 'authenticate', options.challenge, now);
  return options;
}

/**
 * Checks a sign-in assertion: from one of this principal's passkeys, over a challenge issued to
 * this principal and not used before, with a counter that moved. True once per assertion.
 */
export async function verifyPasskeyAssertion(db: SqlExecutor, rp: RelyingParty, principalId: string, response: AuthenticationResponseJSON, now: Date): Promise<boolean> {
  if (typeof response !== 'object' || response === null || typeof response.id !== 'string') return false;
  const key = (await db.query<PasskeyRow>('SELECT * FROM principal_passkeys WHERE credential_id = $1 AND principal_id = $2', [response.id, principalId])).rows[0];
  if (!key) return false;
  const stored = Number(key.sign_count);
  try {
    const v = await verifyAuthenticationResponse({
      response, expectedChallenge: (c) => consumeChallenge(db, principalId, 'authenticate', c, now),
      expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false,
      credential: { id: key.credential_id, publicKey: Buffer.from(key.public_key, 'base64url'), counter: stored, transports: splitTransports(key.transports) },
    });
    if (!v.verified) return false;
    const next = v.authenticationInfo.newCounter;
    // Move the counter only forward (a concurrent use of the same assertion loses here).
    const moved = await db.query('UPDATE principal_passkeys SET sign_count = $3, last_used_at = $4 WHERE credential_id = $1 AND principal_id = $2 AND (sign_count < $3 OR (sign_count = 0 AND $3 = 0))',
      [key.credential_id, principalId, next, now]);
    return moved.rowCount === 1;
  } catch {
    return false;
  }
}

export type { AuthenticationResponseJSON, RegistrationResponseJSON };
