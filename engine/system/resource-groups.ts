/**
 * `system.resource_groups` and `SHOW RESOURCE GROUPS`: one provider over the workload manager's
 * rows (engine/wlm/stats.ts). Resource groups are the deployment's, not a tenant's; the rows hold
 * counts and limits, no tenant's data.
 */
import {
  SHOW_RESOURCE_GROUPS_COLUMNS, SYSTEM_RESOURCE_GROUPS_COLUMNS, showResourceGroupRows, systemResourceGroupRows, type WorkloadStatsSource,
} from '../wlm/stats.js';
import type { SystemColumn, SystemRow, SystemTableProvider } from './provider.js';

export class ResourceGroupsProvider implements SystemTableProvider {
  readonly name = 'resource_groups';
  readonly columns: readonly SystemColumn[] = SYSTEM_RESOURCE_GROUPS_COLUMNS.map((c) => ({ name: c.name, type: c.type }));
  constructor(private readonly source: WorkloadStatsSource) {}

  async rows(): Promise<readonly SystemRow[]> {
    return systemResourceGroupRows(this.source);
  }

  /** SHOW RESOURCE GROUPS: the spec's columns of the same rows. */
  show(): { columns: string[]; types: string[]; rows: unknown[][] } {
    const rows = showResourceGroupRows(this.source);
    return {
      columns: SHOW_RESOURCE_GROUPS_COLUMNS.map((c) => c.name),
      types: SHOW_RESOURCE_GROUPS_COLUMNS.map((c) => c.type),
      rows: rows.map((r) => SHOW_RESOURCE_GROUPS_COLUMNS.map((c) => r[c.name] ?? null)),
    };
  }
}
