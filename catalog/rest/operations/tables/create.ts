/** Create a table (or stage it: metadata returned, nothing written). */
import { newTableMetadata, nextMetadataLocation } from '../../../iceberg/table-metadata.js';
import type { CatalogContext, EntityIdent, Namespace } from '../../context.js';
import { assertStorableText, namespaceKey, qualifiedName, validateEntityName, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { CatalogError, noSuchNamespace } from '../../errors.js';
import type { LoadedTable } from '../../loaded.js';
import { defaultEntityLocation, requireCatalog, requireNamespace } from '../../resolve.js';
import { findEntity, insertEntity, type EntityRecord } from '../../store.js';
import { tableClaims } from '../../locations.js';
import { type CreateTableRequest, NO_CONFIG, alreadyExists } from './common.js';
import { sqlState } from '../../../store/meta-store.js';

export async function createTable(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, request: CreateTableRequest): Promise<LoadedTable> {
  // Validation
  validateNamespace(ns);
  validateEntityName(request.name, 'table');
  assertStorableText(request.location, 'location');
  const ident: EntityIdent = { namespace: ns, name: request.name };
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await requireNamespace(deps.store, catalog, ns);
  const existing = await findEntity(deps.store, catalog.id, namespaceKey(ns), request.name);
  if (existing !== undefined) throw alreadyExists(ident, existing);
  // Business logic
  const tableUuid = deps.newUuid();
  const metadata = newTableMetadata({
    schema: request.schema,
    ...(request.partitionSpec !== undefined ? { partitionSpec: request.partitionSpec } : {}),
    ...(request.writeOrder !== undefined ? { sortOrder: request.writeOrder } : {}),
    location: request.location ?? defaultEntityLocation(catalog, ns, request.name, tableUuid),
    ...(request.properties !== undefined ? { properties: request.properties } : {}),
    tableUuid,
    now: deps.clock.now(),
  });
  // A staged create is refused here too: its commit would be, and the client learns it first.
  const claims = tableClaims(metadata);
  await deps.locations.precheck(catalog, 'table', ident, claims);
  if (request.stageCreate === true) return { catalogId: catalog.id, ident, metadata, config: NO_CONFIG };
  const location = nextMetadataLocation(metadata, undefined, deps.newUuid());
  await deps.files.writeTable(catalog, location, metadata);
  let row: EntityRecord | undefined;
  try {
    row = await deps.store.transaction(async (tx) => {
      await deps.locations.assertFree(tx, catalog, 'table', ident, claims, 'create');
      const inserted = await insertEntity(tx, { id: tableUuid, tenantId: ctx.tenantId, catalogId: catalog.id, namespaceKey: namespaceKey(ns), name: request.name, kind: 'table', metadataLocation: location });
      if (inserted !== undefined) await deps.locations.record(tx, catalog, inserted.id, location, claims);
      return inserted;
    });
  } catch (e) {
    await deps.files.discard(catalog, [location]);
    if (sqlState(e) === '23503') throw noSuchNamespace(ns);
    throw e;
  }
  if (row === undefined) {
    // Lost a race with a concurrent create of the same name: our file was never referenced.
    await deps.files.discard(catalog, [location]);
    const winner = await findEntity(deps.store, catalog.id, namespaceKey(ns), request.name);
    throw winner === undefined ? new CatalogError('AlreadyExistsException', `Table already exists: ${qualifiedName(ident)}`) : alreadyExists(ident, winner);
  }
  return { catalogId: catalog.id, ident, metadataLocation: location, metadata, config: NO_CONFIG };
}
