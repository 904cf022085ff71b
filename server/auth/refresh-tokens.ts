/**
 * Refresh tokens (issued when a client asks for `offline_access`): opaque, stored as SHA-256,
 * rotated on every use. Presenting a token that was already used revokes its whole family, the
 * OAuth 2.1 answer to a stolen refresh token.
 */
import { randomUUID } from 'node:crypto';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { newSecret, sha256 } from '../../engine/principals/secrets.js';
import type { AuthMethod } from './tokens.js';
import type { Clock } from './key-ring.js';

export interface RefreshGrant {
  readonly tenantId: string;
  readonly principalId: string;
  readonly clientId: string | null;
  readonly scope: string;
  readonly authMethod: AuthMethod;
  readonly amr: readonly string[];
  readonly authTime: number;
  readonly sessionEpoch: number;
}

export type RedeemOutcome =
  | { readonly ok: true; readonly grant: RefreshGrant; readonly next: string }
  | { readonly ok: false; readonly reason: string };

export class RefreshTokens {
  constructor(private readonly store: MetaStore, private readonly clock: Clock, private readonly ttlSeconds: number) {}

  async issue(grant: RefreshGrant, familyId: string = randomUUID()): Promise<string> {
    return this.store.transaction((tx) => this.insert(tx, grant, familyId));
  }

  /** Exchanges a refresh token for its grant and a successor token, atomically. */
  async redeem(presented: string): Promise<RedeemOutcome> {
    const digest = sha256(presented);
    return this.store.transaction(async (tx) => {
      const row = (await tx.query<{
        family_id: string; tenant_id: string; principal_id: string; client_id: string | null; scope: string;
        auth_method: AuthMethod; amr: string[]; auth_time: Date; session_epoch: number; expires_at: Date; used_at: Date | null; revoked_at: Date | null;
      }>('SELECT * FROM refresh_tokens WHERE token_sha256 = $1 FOR UPDATE', [digest])).rows[0];
      if (!row) return { ok: false, reason: 'unknown refresh token' } as const;
      if (row.used_at !== null) {
        await tx.query('UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL', [row.family_id]);
        return { ok: false, reason: 'refresh token already used' } as const;
      }
      if (row.revoked_at !== null) return { ok: false, reason: 'refresh token revoked' } as const;
      if (row.expires_at.getTime() <= this.clock.now()) return { ok: false, reason: 'refresh token expired' } as const;
      await tx.query('UPDATE refresh_tokens SET used_at = now() WHERE token_sha256 = $1', [digest]);
      const grant: RefreshGrant = {
        tenantId: row.tenant_id, principalId: row.principal_id, clientId: row.client_id, scope: row.scope,
        authMethod: row.auth_method, amr: row.amr, authTime: Math.floor(row.auth_time.getTime() / 1000), sessionEpoch: Number(row.session_epoch),
      };
      const next = await this.insert(tx, grant, row.family_id);
      return { ok: true, grant, next } as const;
    });
  }

  private async insert(tx: { query: MetaStore['query'] }, g: RefreshGrant, familyId: string): Promise<string> {
    const token = newSecret('frt_');
    await tx.query(
      `INSERT INTO refresh_tokens (token_sha256, family_id, tenant_id, principal_id, client_id, scope, auth_method, amr, auth_time, session_epoch, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9), $10, $11)`,
      [sha256(token), familyId, g.tenantId, g.principalId, g.clientId, g.scope, g.authMethod, g.amr, g.authTime, g.sessionEpoch, new Date(this.clock.now() + this.ttlSeconds * 1000)],
    );
    return token;
  }
}
