/** What the view operations share: the create request, the view-row lookup, metadata file naming. */
import type { Schema } from '../../../iceberg/schema.js';
import { metadataFileName, metadataFileVersion } from '../../../iceberg/table-metadata.js';
import { type ViewMetadata, type ViewVersion } from '../../../iceberg/view-metadata.js';
import type { EntityIdent } from '../../context.js';
import { namespaceKey } from '../../context.js';
import { noSuchNamespace, noSuchView } from '../../errors.js';
import { findEntity, type CatalogRecord, type EntityRecord } from '../../store.js';

export interface CreateViewRequest {
  readonly name: string;
  readonly location?: string;
  readonly schema: Schema;
  readonly viewVersion: ViewVersion;
  readonly properties?: ReadonlyMap<string, string>;
}

export function viewMetadataLocation(m: ViewMetadata, previous: string | undefined, uuid: string): string {
  const prev = previous === undefined ? -1 : (metadataFileVersion(previous) ?? -1);
  return `${m.location.replace(/\/+$/, '')}/metadata/${metadataFileName(prev + 1, uuid)}`;
}

export async function requireView(db: Parameters<typeof findEntity>[0], catalog: CatalogRecord, ident: EntityIdent, lock: '' | 'FOR UPDATE' = ''): Promise<EntityRecord> {
  const row = await findEntity(db, catalog.id, namespaceKey(ident.namespace), ident.name, lock);
  if (row === undefined || row.kind !== 'view') {
    if (row === undefined && (await db.query('SELECT 1 FROM catalog_namespaces WHERE catalog_id = $1 AND namespace_key = $2', [catalog.id, namespaceKey(ident.namespace)])).rows.length === 0) {
      throw noSuchNamespace(ident.namespace);
    }
    throw noSuchView(ident.namespace, ident.name);
  }
  return row;
}
