/**
 * Public surface of the principals context for the session (`/api/query`), the server routes and
 * the catalog. A session runs a principal statement like this:
 *
 *   if (isPrincipalStatement(stmt)) {
 *     if (!auth && !needsNoBearerToken(stmt)) → 401
 *     const ctx = { store, clock, tenantId: auth?.principal.tenantId, actor: auth && actorFromAuth(auth),
 *                   config: config.principals, webhooks: config.webhooks, secrets: state.principals.secrets,
 *                   passwords: state.principals.passwords };
 *     return executePrincipalStatement(ctx, stmt);   // FloeError on refusal
 *   }
 *
 * and, for every statement, refuses what a restricted sign-in token may not run:
 *   statementAllowedUnderRestriction(tokenRestriction(auth.claims.scope), stmt)
 */
export {
  executePrincipalStatement, isPrincipalStatement, needsNoBearerToken, statementAllowedUnderRestriction,
  PRINCIPAL_STATEMENT_KINDS, tombstonePrincipal, parsePatTtl, invitationHolder,
} from './statements.js';
export type { PrincipalStatement } from './statements.js';
export {
  actorFromAuth, tokenRestriction, RESTRICTION_SCOPE_PREFIX, DEFAULT_PRINCIPALS_CONFIG, DEFAULT_WEBHOOKS_CONFIG,
} from './settings.js';
export type { Actor, AuthenticatedLike, Clock, PrincipalContext, PrincipalResult, PrincipalsConfig, TokenRestriction, WebhooksConfig } from './settings.js';
export { principalMayManage, isTenantAdmin, loadManagePrivileges, privilegeName } from './privileges.js';
export type { ManagePrivilegeName, PrincipalRef } from './privileges.js';
export { signIn } from './sign-in.js';
export type { SignInOutcome, SignInRequest } from './sign-in.js';
export { authenticatePat, verifyKeypairAssertion } from './credentials.js';
export { WebhookWorker, replayFailedDeliveries, nextDeliveryState, signBody, RETRY_BACKOFF_MS, MAX_ATTEMPTS } from './webhook-worker.js';
export { PrincipalMaintenance, AUDIT_MONTHS_AHEAD } from './maintenance.js';
export { SecretBox, openSecretBox } from './secret-box.js';
export { PasswordHasher, hashPassword, verifyPassword, setPasswordPolicy, loadPasswordPolicy, DEFAULT_PASSWORD_POLICY, policyViolations } from './passwords.js';
export type { PasswordPolicy } from './passwords.js';
export { EVENT_ALIASES, AUDIT_EVENT_TYPES, subscriptionMatches, eventAlias } from './events.js';
export type { AuditEventType } from './events.js';
export { recordAudit, readAuditLog, AUDIT_LOG_COLUMNS } from './audit.js';
export { newPat, isWellFormedPat, PAT_PREFIX, INVITATION_PREFIX } from './token-format.js';
export { matchTotp, totpCode, newTotpSecret, totpUri } from './totp.js';
export { validatePublicKey } from './keypairs.js';
export * from './principals.js';
export * from './tenants.js';
export * from './clients.js';
export * from './scopes.js';
export { bootstrapIfEmpty, createTenantWithAdmin, DEFAULT_TENANT, BOOTSTRAP_PRINCIPAL } from './bootstrap.js';
