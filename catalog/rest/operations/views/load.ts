/** Load a view. */
import type { CatalogContext, EntityIdent } from '../../context.js';
import { validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { readingMetadata, type LoadedView } from '../../loaded.js';
import { requireCatalog } from '../../resolve.js';
import { NO_CONFIG } from '../tables/common.js';
import { requireView } from './common.js';

export async function loadView(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<LoadedView> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const row = await requireView(deps.store, catalog, ident);
  const metadata = await readingMetadata(deps.files.readView(catalog, row.metadataLocation));
  return { catalogId: catalog.id, ident, metadataLocation: row.metadataLocation, metadata, config: NO_CONFIG };
}
