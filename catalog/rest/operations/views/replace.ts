/** Replace a view (its commit): lock, check assert-view-uuid, apply updates, write, compare-and-swap. */
import { applyViewUpdates, checkViewRequirements, type ViewRequirement, type ViewUpdate } from '../../../iceberg/view-metadata.js';
import type { CatalogContext, EntityIdent } from '../../context.js';
import { qualifiedName, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { CatalogError, toCatalogError } from '../../errors.js';
import { readingMetadata, type LoadedView } from '../../loaded.js';
import { requireCatalog } from '../../resolve.js';
import { swapMetadataLocation } from '../../store.js';
import { sameClaims, viewClaims } from '../../locations.js';
import { NO_CONFIG } from '../tables/common.js';
import { viewMetadataLocation, requireView } from './common.js';

/** Replaces a view (its commit): requirements are checked and updates applied under the row lock. */
export async function replaceView(
  deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent, requirements: readonly ViewRequirement[], updates: readonly ViewUpdate[],
): Promise<LoadedView> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const written: string[] = [];
  let commitSent = false;
  try {
    const result = await deps.store.transaction(async (tx) => {
      const row = await requireView(tx, catalog, ident, 'FOR UPDATE');
      const base = await readingMetadata(deps.files.readView(catalog, row.metadataLocation));
      const failure = checkViewRequirements(base, requirements)[0];
      if (failure !== undefined) throw new CatalogError('CommitFailedException', failure);
      const next = applyViewUpdates(base, updates);
      if (next === base) return { catalogId: catalog.id, ident, metadataLocation: row.metadataLocation, metadata: base, config: NO_CONFIG };
      const claims = viewClaims(next);
      const moved = !sameClaims(viewClaims(base), claims);
      if (moved) await deps.locations.assertFree(tx, catalog, 'view', ident, claims, 'commit');
      const location = viewMetadataLocation(next, row.metadataLocation, deps.newUuid());
      written.push(location);
      await deps.files.writeView(catalog, location, next);
      if (!(await swapMetadataLocation(tx, row.id, row.metadataLocation, location, !moved))) throw new CatalogError('CommitFailedException', `Commit failed: view ${qualifiedName(ident)} changed concurrently`);
      if (moved || row.locationsOf !== row.metadataLocation) await deps.locations.record(tx, catalog, row.id, location, claims);
      commitSent = true;
      return { catalogId: catalog.id, ident, metadataLocation: location, metadata: next, config: NO_CONFIG };
    });
    return result;
  } catch (e) {
    const known = toCatalogError(e);
    if (commitSent && known === undefined) throw new CatalogError('CommitStateUnknownException', `Commit state unknown: ${(e as Error).message}`, { cause: e });
    if (written.length > 0) await deps.files.discard(catalog, written);
    throw known ?? e;
  }
}
