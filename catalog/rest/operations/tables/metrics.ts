/** Store a client's scan or commit report. */
import type { JsonValue } from '../../../iceberg/json.js';
import type { CatalogContext, EntityIdent } from '../../context.js';
import { assertStorableText, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { requireCatalog } from '../../resolve.js';
import { requireTable } from './common.js';

/** Stores a client's scan or commit report (POST .../metrics). */
export async function reportMetrics(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent, reportType: string, report: JsonValue): Promise<void> {
  validateNamespace(ident.namespace);
  assertStorableText(report, 'metrics report');
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const row = await requireTable(deps.store, catalog, ident);
  await deps.store.query(
    'INSERT INTO catalog_metrics_reports (tenant_id, catalog_id, entity_id, report_type, report) VALUES ($1, $2, $3, $4, $5::jsonb)',
    [ctx.tenantId, catalog.id, row.id, reportType, JSON.stringify(report, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))],
  );
}
