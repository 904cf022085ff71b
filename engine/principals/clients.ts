/**
 * OAuth client credentials (client_credentials grant): a client id and a secret bound to one
 * principal, with the scopes that principal may request through it. The secret is shown once;
 * only its SHA-256 is stored.
 */
import type { SqlExecutor } from '../../catalog/store/meta-store.js';
import { splitRoles, type PrincipalAuthState, type PrincipalKind, type PrincipalStatus } from './principals.js';
import { ALL_SCOPES, isScope, type Scope } from './scopes.js';
import { newIdentifier, newSecret, secretMatchesDigest, sha256 } from './secrets.js';

export interface ClientCredentials {
  readonly clientId: string;
  /** Plaintext: returned once to whoever created or rotated the client, never stored. */
  readonly clientSecret: string;
}

export interface OAuthClient {
  readonly clientId: string;
  readonly tenantId: string;
  readonly principalId: string;
  readonly allowedScopes: readonly Scope[];
  readonly revoked: boolean;
}

export class ClientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientError';
  }
}

const CLIENT_ID_PATTERN = /^[A-Za-z0-9._~-]{8,128}$/;
const SECRET_MIN_LENGTH = 24;

export interface NewClient {
  readonly tenantId: string;
  readonly principalId: string;
  readonly scopes?: readonly string[];
  /** Operator-chosen credentials (bootstrap automation); generated when absent. */
  readonly clientId?: string;
  readonly clientSecret?: string;
}

export async function createClient(db: SqlExecutor, c: NewClient): Promise<ClientCredentials> {
  const clientId = c.clientId ?? newIdentifier('floe_');
  const clientSecret = c.clientSecret ?? newSecret('fcs_');
  if (!CLIENT_ID_PATTERN.test(clientId)) throw new ClientError(`client id must be 8-128 characters of A-Z a-z 0-9 . _ ~ -`);
  if (clientSecret.length < SECRET_MIN_LENGTH) throw new ClientError(`client secret must be at least ${SECRET_MIN_LENGTH} characters`);
  const scopes = validateScopes(c.scopes ?? ALL_SCOPES);
  const r = await db.query(
    `INSERT INTO oauth_clients (client_id, tenant_id, principal_id, secret_sha256, allowed_scopes)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (client_id) DO NOTHING`,
    [clientId, c.tenantId, c.principalId, sha256(clientSecret), scopes],
  );
  if (r.rowCount !== 1) throw new ClientError(`client id ${clientId} is taken`);
  return { clientId, clientSecret };
}

/** Replaces the secret; the old one stops working at once. */
export async function rotateClient(db: SqlExecutor, clientId: string): Promise<ClientCredentials> {
  const clientSecret = newSecret('fcs_');
  const r = await db.query(
    'UPDATE oauth_clients SET secret_sha256 = $2, rotated_at = now() WHERE client_id = $1 AND revoked_at IS NULL',
    [clientId, sha256(clientSecret)],
  );
  if (r.rowCount !== 1) throw new ClientError(`no active client ${clientId}`);
  return { clientId, clientSecret };
}

export async function revokeClient(db: SqlExecutor, clientId: string): Promise<void> {
  const r = await db.query('UPDATE oauth_clients SET revoked_at = now() WHERE client_id = $1 AND revoked_at IS NULL', [clientId]);
  if (r.rowCount !== 1) throw new ClientError(`no active client ${clientId}`);
}

export async function findClient(db: SqlExecutor, clientId: string): Promise<OAuthClient | undefined> {
  const row = (await db.query<{ client_id: string; tenant_id: string; principal_id: string; allowed_scopes: string[]; revoked_at: Date | null }>(
    'SELECT client_id, tenant_id, principal_id, allowed_scopes, revoked_at FROM oauth_clients WHERE client_id = $1', [clientId],
  )).rows[0];
  return row && { clientId: row.client_id, tenantId: row.tenant_id, principalId: row.principal_id, allowedScopes: row.allowed_scopes.filter(isScope), revoked: row.revoked_at !== null };
}

/**
 * Checks a client id and secret. Unknown, revoked and wrong-secret clients look the same to the
 * caller; for an unknown id a digest is still compared so the timing does not tell them apart.
 */
export async function authenticateClient(db: SqlExecutor, clientId: string, clientSecret: string): Promise<OAuthClient | undefined> {
  const row = (await db.query<{ client_id: string; tenant_id: string; principal_id: string; allowed_scopes: string[]; secret_sha256: Uint8Array; revoked_at: Date | null }>(
    'SELECT client_id, tenant_id, principal_id, allowed_scopes, secret_sha256, revoked_at FROM oauth_clients WHERE client_id = $1', [clientId],
  )).rows[0];
  const matches = secretMatchesDigest(clientSecret, row?.secret_sha256 ?? DUMMY_DIGEST);
  if (!row || !matches || row.revoked_at !== null) return undefined;
  return { clientId: row.client_id, tenantId: row.tenant_id, principalId: row.principal_id, allowedScopes: row.allowed_scopes.filter(isScope), revoked: false };
}

const DUMMY_DIGEST = sha256('floe: no such client');

function validateScopes(scopes: readonly string[]): Scope[] {
  const bad = scopes.filter((s) => !isScope(s));
  if (bad.length > 0) throw new ClientError(`unknown scope ${bad.join(', ')} (known: ${ALL_SCOPES.join(', ')})`);
  return [...new Set(scopes as Scope[])];
}

/** A client row with its principal's auth state: what the token endpoint checks a secret against. */
export interface ClientPrincipal {
  readonly client: OAuthClient;
  readonly secretSha256: Uint8Array;
  readonly principal: PrincipalAuthState;
}

/** The client and its principal in one store round trip (the token endpoint's hot path). */
export async function loadClientPrincipal(db: SqlExecutor, clientId: string): Promise<ClientPrincipal | undefined> {
  const row = (await db.query<{
    client_id: string; tenant_id: string; principal_id: string; allowed_scopes: string[]; secret_sha256: Uint8Array; revoked_at: Date | null;
    kind: PrincipalKind; name: string; status: PrincipalStatus; session_epoch: number | bigint; is_bootstrap_principal: boolean; roles: string | null;
  }>(
    `SELECT c.client_id, c.tenant_id, c.principal_id, c.allowed_scopes, c.secret_sha256, c.revoked_at,
            p.kind, p.name, p.status, p.session_epoch, p.is_bootstrap_principal,
            (SELECT string_agg(r.role, chr(31) ORDER BY r.role) FROM principal_roles r WHERE r.principal_id = p.id) AS roles
       FROM oauth_clients c JOIN principals p ON p.id = c.principal_id AND p.tenant_id = c.tenant_id
      WHERE c.client_id = $1`, [clientId],
  )).rows[0];
  if (!row) return undefined;
  return {
    client: { clientId: row.client_id, tenantId: row.tenant_id, principalId: row.principal_id, allowedScopes: row.allowed_scopes.filter(isScope), revoked: row.revoked_at !== null },
    secretSha256: row.secret_sha256,
    principal: {
      id: row.principal_id, tenantId: row.tenant_id, kind: row.kind, name: row.name, status: row.status,
      sessionEpoch: Number(row.session_epoch), roles: splitRoles(row.roles), isBootstrap: row.is_bootstrap_principal,
    },
  };
}

/**
 * Checks a presented secret against a loaded client (or its absence). Unknown, revoked and
 * wrong-secret clients look the same; for an unknown id a digest is still compared so the timing
 * does not tell them apart.
 */
export function checkClientSecret(found: ClientPrincipal | undefined, clientSecret: string): { client: OAuthClient; principal: PrincipalAuthState } | undefined {
  const matches = secretMatchesDigest(clientSecret, found?.secretSha256 ?? DUMMY_DIGEST);
  if (!found || !matches || found.client.revoked) return undefined;
  return { client: found.client, principal: found.principal };
}

/** `loadClientPrincipal` then `checkClientSecret`, uncached. */
export async function authenticateClientPrincipal(db: SqlExecutor, clientId: string, clientSecret: string): Promise<{ client: OAuthClient; principal: PrincipalAuthState } | undefined> {
  return checkClientSecret(await loadClientPrincipal(db, clientId), clientSecret);
}
