/**
 * Principal statements in a session: the query interface's principal becomes the principals
 * context's actor, and each statement is one call of `executePrincipalStatement`.
 */
import type { MetaStore } from '../../catalog/store/meta-store.js';
import type { Statement } from '../../grammar/ir.js';
import { floeError } from '../../grammar/errors.js';
import {
  executePrincipalStatement, isPrincipalStatement, tokenRestriction, invitationHolder, RESTRICTION_SCOPE_PREFIX, DEFAULT_TENANT,
  type PrincipalContext, type PrincipalsConfig, type SecretBox, type WebhooksConfig,
} from '../principals/index.js';
import type { HistoryOwner, RowSet, StatementContext } from './query-service.js';
import type { PasswordHasher } from '../principals/passwords.js';

export interface PrincipalStatementsOptions {
  readonly store: MetaStore;
  readonly clock: { now(): number };
  readonly config: PrincipalsConfig;
  readonly webhooks: WebhooksConfig;
  readonly secrets: SecretBox;
  /** The process's Argon2id gate, so hashing never starves query execution of threads. */
  readonly passwords?: PasswordHasher;
}

/** Where a redemption with an unknown token is recorded. */
export const ANONYMOUS_HISTORY_OWNER: HistoryOwner = { tenantId: DEFAULT_TENANT, principalId: 'anonymous', name: 'anonymous' };

export class PrincipalStatements {
  constructor(private readonly o: PrincipalStatementsOptions) {}

  private context(tenantId: string | undefined, actor: PrincipalContext['actor']): PrincipalContext {
    return { store: this.o.store, clock: this.o.clock, tenantId, actor, config: this.o.config, webhooks: this.o.webhooks, secrets: this.o.secrets, passwords: this.o.passwords };
  }

  async run(ctx: StatementContext, statement: Statement): Promise<RowSet> {
    if (!isPrincipalStatement(statement)) throw floeError('UNSUPPORTED_STATEMENT', { what: statement.kind });
    const p = ctx.principal;
    return executePrincipalStatement(this.context(p.tenantId, {
      id: p.principalId, name: p.name, kind: p.kind, roles: p.roles, amr: p.amr, authTime: p.authTime,
      authMethod: p.authMethod, restriction: tokenRestriction(p.scopeClaim),
      // A PAT a principal makes for itself cannot carry scopes its own token lacks.
      scopes: p.scopeClaim.split(' ').filter((w) => w.length > 0 && !w.startsWith(RESTRICTION_SCOPE_PREFIX)),
    }), statement);
  }

  /** REDEEM INVITATION without a bearer token. */
  async redeem(statement: Statement): Promise<RowSet> {
    if (statement.kind !== 'RedeemInvitation') throw floeError('NOT_AUTHENTICATED', { detail: 'this statement needs a bearer token' });
    return executePrincipalStatement(this.context(undefined, undefined), statement);
  }

  /**
   * Whose history a redemption attempt joins, whether it succeeds or not: the tenant and invitee
   * of the invitation its token names (redeemed, revoked or expired alike); a token no invitation
   * has is filed in the default tenant as `anonymous`, since nothing names another.
   */
  async historyOwnerOf(statement: Statement): Promise<HistoryOwner> {
    const holder = statement.kind === 'RedeemInvitation' ? await invitationHolder(this.o.store, statement.token) : undefined;
    return holder ?? ANONYMOUS_HISTORY_OWNER;
  }
}
