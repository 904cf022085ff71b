/** Create a view: version 1, its schema, the first metadata file. */
import { newViewMetadata } from '../../../iceberg/view-metadata.js';
import type { CatalogContext, EntityIdent, Namespace } from '../../context.js';
import { namespaceKey, qualifiedName, validateEntityName, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { CatalogError, noSuchNamespace } from '../../errors.js';
import type { LoadedView } from '../../loaded.js';
import { defaultEntityLocation, requireCatalog, requireNamespace } from '../../resolve.js';
import { findEntity, insertEntity, type EntityRecord } from '../../store.js';
import { viewClaims } from '../../locations.js';
import { alreadyExists, NO_CONFIG } from '../tables/common.js';
import { sqlState } from '../../../store/meta-store.js';
import { type CreateViewRequest, viewMetadataLocation } from './common.js';

export async function createView(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, request: CreateViewRequest): Promise<LoadedView> {
  // Validation
  validateNamespace(ns);
  validateEntityName(request.name, 'view');
  const ident: EntityIdent = { namespace: ns, name: request.name };
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await requireNamespace(deps.store, catalog, ns);
  const existing = await findEntity(deps.store, catalog.id, namespaceKey(ns), request.name);
  if (existing !== undefined) throw alreadyExists(ident, existing);
  // Business logic
  const viewUuid = deps.newUuid();
  const metadata = newViewMetadata({
    schema: request.schema,
    viewVersion: request.viewVersion,
    location: (request.location ?? defaultEntityLocation(catalog, ns, request.name, viewUuid)).replace(/\/+$/, ''),
    ...(request.properties !== undefined ? { properties: request.properties } : {}),
    viewUuid,
  });
  const claims = viewClaims(metadata);
  await deps.locations.precheck(catalog, 'view', ident, claims);
  const location = viewMetadataLocation(metadata, undefined, deps.newUuid());
  await deps.files.writeView(catalog, location, metadata);
  let row: EntityRecord | undefined;
  try {
    row = await deps.store.transaction(async (tx) => {
      await deps.locations.assertFree(tx, catalog, 'view', ident, claims, 'create');
      const inserted = await insertEntity(tx, { id: viewUuid, tenantId: ctx.tenantId, catalogId: catalog.id, namespaceKey: namespaceKey(ns), name: request.name, kind: 'view', metadataLocation: location });
      if (inserted !== undefined) await deps.locations.record(tx, catalog, inserted.id, location, claims);
      return inserted;
    });
  } catch (e) {
    await deps.files.discard(catalog, [location]);
    if (sqlState(e) === '23503') throw noSuchNamespace(ns);
    throw e;
  }
  if (row === undefined) {
    await deps.files.discard(catalog, [location]);
    throw new CatalogError('AlreadyExistsException', `View already exists: ${qualifiedName(ident)}`);
  }
  return { catalogId: catalog.id, ident, metadataLocation: location, metadata, config: NO_CONFIG };
}
