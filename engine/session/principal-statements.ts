/**
 * Principal statements in a session: the query interface's principal becomes the principals
 * context's actor, and each statement is one call of `executePrincipalStatement`.
 */
import type { MetaStore } from '../../catalog/store/meta-store.js';
import type { Statement } from '../../grammar/ir.js';
import { floeError } from '../../grammar/errors.js';
import {
  executePrincipalStatement, isPrincipalStatement, tokenRestriction, findPrincipalByName, RESTRICTION_SCOPE_PREFIX,
  type PrincipalContext, type PrincipalsConfig, type SecretBox, type WebhooksConfig,
} from '../principals/index.js';
import type { RowSet, StatementContext } from './query-service.js';
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

  /** REDEEM INVITATION without a bearer token; the redeemed user's tenant and id for history. */
  async redeem(statement: Statement): Promise<RowSet & { recordAs?: { tenantId: string; principalId: string; name: string } }> {
    if (statement.kind !== 'RedeemInvitation') throw floeError('NOT_AUTHENTICATED', { detail: 'this statement needs a bearer token' });
    const result = await executePrincipalStatement(this.context(undefined, undefined), statement);
    const [name, , tenant] = (result.rows[0] ?? []) as [string?, string?, string?];
    const who = name !== undefined && tenant !== undefined ? await findPrincipalByName(this.o.store, tenant, name) : undefined;
    return { ...result, ...(who ? { recordAs: { tenantId: who.tenantId, principalId: who.id, name: who.name } } : {}) };
  }
}
