/**
 * `system.copy_history`: the load history of COPY INTO, one row per file loaded (newest first).
 * tenant_admin sees the tenant's loads, others their own. The same rows decide which files a COPY
 * skips (engine/stages/copy-into.ts).
 */
import type { MetaStore } from '../../catalog/store/meta-store.js';
import type { SystemColumn, SystemPushdown, SystemRow, SystemTableProvider, SystemViewer } from '../system/provider.js';

export class CopyHistoryProvider implements SystemTableProvider {
  readonly name = 'copy_history';
  readonly columns: readonly SystemColumn[] = [
    { name: 'table_name', type: 'VARCHAR' }, { name: 'file_name', type: 'VARCHAR' }, { name: 'size', type: 'BIGINT' }, { name: 'etag', type: 'VARCHAR' },
    { name: 'status', type: 'VARCHAR' }, { name: 'rows_parsed', type: 'BIGINT' }, { name: 'rows_loaded', type: 'BIGINT' }, { name: 'errors_seen', type: 'BIGINT' },
    { name: 'first_error', type: 'VARCHAR' }, { name: 'query_id', type: 'VARCHAR' }, { name: 'user_id', type: 'VARCHAR' }, { name: 'snapshot_id', type: 'BIGINT' },
    { name: 'loaded_at', type: 'TIMESTAMPTZ' },
  ];
  constructor(private readonly store: MetaStore) {}

  async rows(viewer: SystemViewer, pushdown: SystemPushdown = {}): Promise<readonly SystemRow[]> {
    const r = await this.store.query<Record<string, unknown>>(
      `SELECT table_name, file_name, size, etag, status, rows_parsed, rows_loaded, errors_seen, first_error, query_id, principal_id::text AS user_id, snapshot_id, loaded_at
         FROM copy_history WHERE tenant_id = $1 AND ($2 OR principal_id = $3::uuid) ORDER BY loaded_at DESC, file_name LIMIT $4`,
      [viewer.tenantId, viewer.isTenantAdmin, viewer.principalId, pushdown.limit ?? 100_000]);
    return r.rows.map((row) => ({
      ...row, size: BigInt(String(row['size'])), rows_parsed: BigInt(String(row['rows_parsed'])), rows_loaded: BigInt(String(row['rows_loaded'])),
      errors_seen: BigInt(String(row['errors_seen'])), snapshot_id: row['snapshot_id'] === null ? null : BigInt(String(row['snapshot_id'])), loaded_at: new Date(row['loaded_at'] as string),
    }));
  }
}
