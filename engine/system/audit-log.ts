/**
 * `system.audit_log`: the tenant's principal-management audit rows (`user_audit_log`), for
 * tenant_admin only (others get 42501), newest first.
 */
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { readAuditLog } from '../principals/audit.js';
import { TENANT_ADMIN_ROLE } from '../principals/principals.js';
import type { SystemColumn, SystemPushdown, SystemRow, SystemTableProvider, SystemViewer } from './provider.js';

export class AuditLogProvider implements SystemTableProvider {
  readonly name = 'audit_log';
  readonly columns: readonly SystemColumn[] = [
    { name: 'tenant_id', type: 'VARCHAR' }, { name: 'actor_id', type: 'VARCHAR' }, { name: 'actor_name', type: 'VARCHAR' },
    { name: 'target_id', type: 'VARCHAR' }, { name: 'target_name', type: 'VARCHAR' }, { name: 'event_type', type: 'VARCHAR' },
    { name: 'details', type: 'VARCHAR' }, { name: 'created_at', type: 'TIMESTAMPTZ' },
  ];
  constructor(private readonly store: MetaStore) {}

  async rows(viewer: SystemViewer, pushdown: SystemPushdown = {}): Promise<readonly SystemRow[]> {
    const r = await readAuditLog(this.store, { tenantId: viewer.tenantId, roles: viewer.isTenantAdmin ? [TENANT_ADMIN_ROLE] : [] }, { limit: pushdown.limit ?? 10_000 });
    return r.rows.map((row) => Object.fromEntries(this.columns.map((c, i) => [c.name, row[i] ?? null])));
  }
}
