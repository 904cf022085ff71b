/**
 * Rename of a table or view, possibly into another namespace: one UPDATE of the row under its lock.
 * The metadata files stay where they are (as in Java catalogs: a rename moves no data).
 */
import type { CatalogContext, EntityIdent } from '../context.js';
import { namespaceKey, qualifiedName, validateEntityName, validateNamespace } from '../context.js';
import type { CatalogDeps } from '../deps.js';
import { noSuchNamespace, noSuchTable, noSuchView } from '../errors.js';
import { requireCatalog } from '../resolve.js';
import { findEntity, findNamespace, type EntityKind } from '../store.js';
import { alreadyExists } from './tables/common.js';
import { sqlState } from '../../store/meta-store.js';
import { CatalogError } from '../errors.js';

export async function renameEntity(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, kind: EntityKind, source: EntityIdent, destination: EntityIdent): Promise<void> {
  // Validation
  validateNamespace(source.namespace);
  validateNamespace(destination.namespace);
  validateEntityName(source.name, kind);
  validateEntityName(destination.name, kind);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const missing = kind === 'table' ? noSuchTable(source.namespace, source.name) : noSuchView(source.namespace, source.name);
  // Business logic
  await deps.store.transaction(async (tx) => {
    const row = await findEntity(tx, catalog.id, namespaceKey(source.namespace), source.name, 'FOR UPDATE');
    if (row === undefined || row.kind !== kind) throw missing;
    if (namespaceKey(source.namespace) === namespaceKey(destination.namespace) && source.name === destination.name) return;
    if ((await findNamespace(tx, catalog.id, namespaceKey(destination.namespace), 'FOR SHARE')) === undefined) throw noSuchNamespace(destination.namespace);
    const clash = await findEntity(tx, catalog.id, namespaceKey(destination.namespace), destination.name);
    if (clash !== undefined) throw alreadyExists(destination, clash);
    try {
      await tx.query('UPDATE catalog_entities SET namespace_key = $2, name = $3, updated_at = now() WHERE id = $1', [row.id, namespaceKey(destination.namespace), destination.name]);
    } catch (e) {
      if (sqlState(e) === '23505') throw new CatalogError('AlreadyExistsException', `Cannot rename ${qualifiedName(source)} to ${qualifiedName(destination)}: it already exists`);
      throw e;
    }
  });
}
