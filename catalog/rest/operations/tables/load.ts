/** Load a table: one round trip for catalog and row, then the (cached, immutable) metadata file. */
import type { CatalogContext, EntityIdent } from '../../context.js';
import { namespaceKey, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { noSuchWarehouse } from '../../errors.js';
import { readingMetadata, type LoadedTable } from '../../loaded.js';
import { findCatalogAndEntity } from '../../store.js';
import { NO_CONFIG, requireTable } from './common.js';

export async function loadTable(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<LoadedTable> {
  validateNamespace(ident.namespace);
  // One round trip on the hot path: the tenant's catalog and the table row together.
  const { catalog, entity } = await findCatalogAndEntity(deps.store, ctx.tenantId, catalogName, namespaceKey(ident.namespace), ident.name);
  if (catalog === undefined) throw noSuchWarehouse(catalogName);
  const row = entity !== undefined && entity.kind === 'table' ? entity : await requireTable(deps.store, catalog, ident);
  const metadata = await readingMetadata(deps.files.readTable(catalog, row.metadataLocation));
  return { catalogId: catalog.id, catalog, ident, metadataLocation: row.metadataLocation, metadata, config: NO_CONFIG };
}
