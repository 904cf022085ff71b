/** Register an existing metadata file as a table (with `overwrite`). */
import type { CatalogContext, EntityIdent, Namespace } from '../../context.js';
import { assertStorableText, namespaceKey, qualifiedName, validateEntityName, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { CatalogError, noSuchNamespace } from '../../errors.js';
import { readingMetadata, type LoadedTable } from '../../loaded.js';
import { requireCatalog, requireNamespace } from '../../resolve.js';
import { findEntity, insertEntity, swapMetadataLocation, type EntityRecord } from '../../store.js';
import { tableClaims } from '../../locations.js';
import { type RegisterTableRequest, NO_CONFIG, alreadyExists } from './common.js';
import { sqlState } from '../../../store/meta-store.js';

/**
 * Registers an existing metadata file as a table (read through the catalog's remappings, so a
 * table written elsewhere can be registered in place). `overwrite` re-points an existing table.
 */
export async function registerTable(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, request: RegisterTableRequest): Promise<LoadedTable> {
  // Validation
  validateNamespace(ns);
  validateEntityName(request.name, 'table');
  if (request.metadataLocation === '') throw new CatalogError('BadRequestException', 'Invalid metadata location: empty');
  assertStorableText(request.metadataLocation, 'metadata location');
  const ident: EntityIdent = { namespace: ns, name: request.name };
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await requireNamespace(deps.store, catalog, ns);
  const metadata = await readingMetadata(deps.files.readTable(catalog, request.metadataLocation));
  const claims = tableClaims(metadata);
  await deps.locations.precheck(catalog, 'table', ident, claims);
  // Business logic
  await deps.store.transaction(async (tx) => {
    // The row lock first, then the catalog's location lock (the order every commit takes them in).
    const existing = await findEntity(tx, catalog.id, namespaceKey(ns), request.name, 'FOR UPDATE');
    if (existing !== undefined && (request.overwrite !== true || existing.kind !== 'table')) throw alreadyExists(ident, existing);
    await deps.locations.assertFree(tx, catalog, 'table', ident, claims, 'create');
    if (existing !== undefined) {
      await swapMetadataLocation(tx, existing.id, existing.metadataLocation, request.metadataLocation, false);
      await deps.locations.record(tx, catalog, existing.id, request.metadataLocation, claims);
      return;
    }
    let row: EntityRecord | undefined;
    try {
      row = await insertEntity(tx, { id: deps.newUuid(), tenantId: ctx.tenantId, catalogId: catalog.id, namespaceKey: namespaceKey(ns), name: request.name, kind: 'table', metadataLocation: request.metadataLocation });
    } catch (e) {
      if (sqlState(e) === '23503') throw noSuchNamespace(ns);
      throw e;
    }
    if (row === undefined) throw new CatalogError('AlreadyExistsException', `Table already exists: ${qualifiedName(ident)}`);
    await deps.locations.record(tx, catalog, row.id, request.metadataLocation, claims);
  });
  return { catalogId: catalog.id, ident, metadataLocation: request.metadataLocation, metadata, config: NO_CONFIG };
}
