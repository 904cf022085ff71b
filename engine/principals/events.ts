/**
 * Audit event names. The spec names four (`create_user`, `drop_user`, `create_pat`,
 * `drop_service_account`); every event follows that verb_resource form and also has a dotted
 * alias resource.verb (`user.create`). A subscription's EVENTS entry selects an event when it
 * equals the name or the alias, or when it ends in a dot and the alias starts with it: `user.`
 * selects every user event, `pat.` every PAT event. The X-Svc-Event-Type header carries the name.
 */

export const EVENT_ALIASES = {
  create_user: 'user.create',
  alter_user: 'user.alter',
  suspend_user: 'user.suspend',
  unsuspend_user: 'user.unsuspend',
  unlock_user: 'user.unlock',
  rename_user: 'user.rename',
  drop_user: 'user.drop',
  undrop_user: 'user.undrop',
  expunge_user: 'user.expunge',
  archive_user: 'user.archive',
  change_password: 'user.change_password',
  redeem_invitation: 'user.redeem_invitation',
  enroll_mfa: 'user.enroll_mfa',
  verify_mfa: 'user.verify_mfa',
  disable_mfa: 'user.disable_mfa',
  regenerate_recovery_codes: 'user.regenerate_recovery_codes',
  add_passkey: 'user.add_passkey',
  remove_passkey: 'user.remove_passkey',
  set_legal_hold: 'legal_hold.set',
  clear_legal_hold: 'legal_hold.clear',
  create_service_account: 'service_account.create',
  drop_service_account: 'service_account.drop',
  add_keypair: 'keypair.add',
  drop_keypair: 'keypair.drop',
  create_pat: 'pat.create',
  drop_pat: 'pat.drop',
  create_webhook: 'webhook.create',
  drop_webhook: 'webhook.drop',
  create_role: 'role.create',
  drop_role: 'role.drop',
  grant_role: 'role.grant',
  revoke_role: 'role.revoke',
  grant_privilege: 'privilege.grant',
  revoke_privilege: 'privilege.revoke',
} as const;

export type AuditEventType = keyof typeof EVENT_ALIASES;

export const AUDIT_EVENT_TYPES = Object.keys(EVENT_ALIASES) as AuditEventType[];

export function eventAlias(type: AuditEventType): string {
  return EVENT_ALIASES[type];
}

/** Whether a subscription with this EVENTS list receives `type`; no list receives everything. */
export function subscriptionMatches(events: readonly string[] | null, type: AuditEventType): boolean {
  if (events === null || events.length === 0) return true;
  const alias = EVENT_ALIASES[type];
  return events.some((e) => {
    const entry = e.toLowerCase();
    if (entry.endsWith('.')) return alias.startsWith(entry);
    return entry === type || entry === alias;
  });
}

/** An EVENTS entry that can never match anything is refused at CREATE WEBHOOK (typo guard). */
export function isKnownEventSelector(entry: string): boolean {
  const e = entry.toLowerCase();
  if (e.endsWith('.')) return AUDIT_EVENT_TYPES.some((t) => EVENT_ALIASES[t].startsWith(e));
  return AUDIT_EVENT_TYPES.some((t) => t === e || EVENT_ALIASES[t] === e);
}
