/** What the table operations share: request shapes, the table-row lookup, conflict errors. */
import type { UnboundPartitionSpec } from '../../../iceberg/partition-spec.js';
import type { Schema } from '../../../iceberg/schema.js';
import type { SortOrder } from '../../../iceberg/sort-order.js';
import type { EntityIdent } from '../../context.js';
import { namespaceKey, qualifiedName } from '../../context.js';
import { CatalogError, noSuchNamespace, noSuchTable } from '../../errors.js';
import { findEntity, type CatalogRecord, type EntityRecord } from '../../store.js';

export interface CreateTableRequest {
  readonly name: string;
  /** Defaults to `<warehouse>/<namespace>/<name>-<uuid>`. */
  readonly location?: string;
  readonly schema: Schema;
  readonly partitionSpec?: UnboundPartitionSpec;
  readonly writeOrder?: SortOrder;
  /** Return the metadata without creating the table; the client commits it later with `assert-create`. */
  readonly stageCreate?: boolean;
  readonly properties?: ReadonlyMap<string, string>;
}

export interface RegisterTableRequest {
  readonly name: string;
  readonly metadataLocation: string;
  /** Point an existing table at this metadata instead of failing with 409. */
  readonly overwrite?: boolean;
}

export const NO_CONFIG: ReadonlyMap<string, string> = new Map();

export function alreadyExists(ident: EntityIdent, existing: EntityRecord): CatalogError {
  return existing.kind === 'view'
    ? new CatalogError('AlreadyExistsException', `View with same name already exists: ${qualifiedName(ident)}`)
    : new CatalogError('AlreadyExistsException', `Table already exists: ${qualifiedName(ident)}`);
}

/** The table row of `ident`, or 404 (a view of that name is not a table). */
export async function requireTable(db: Parameters<typeof findEntity>[0], catalog: CatalogRecord, ident: EntityIdent, lock: '' | 'FOR UPDATE' = ''): Promise<EntityRecord> {
  const row = await findEntity(db, catalog.id, namespaceKey(ident.namespace), ident.name, lock);
  if (row === undefined || row.kind !== 'table') {
    if (row === undefined && (await db.query('SELECT 1 FROM catalog_namespaces WHERE catalog_id = $1 AND namespace_key = $2', [catalog.id, namespaceKey(ident.namespace)])).rows.length === 0) {
      throw noSuchNamespace(ident.namespace);
    }
    throw noSuchTable(ident.namespace, ident.name);
  }
  return row;
}
