/** What table and view operations return: the pointer, the metadata behind it, and per-table config. */
import type { TableMetadata } from '../iceberg/table-metadata.js';
import type { ViewMetadata } from '../iceberg/view-metadata.js';
import { FileNotFoundError } from '../../storage-creds/file-io.js';
import { CatalogError } from './errors.js';
import type { EntityIdent } from './context.js';
import type { CatalogRecord } from './store.js';

export interface LoadedTable {
  readonly catalogId: string;
  /** The catalog as this load read it (loads that read it together with the table say so). */
  readonly catalog?: CatalogRecord;
  readonly ident: EntityIdent;
  /** Absent only for a staged create (nothing written yet). */
  readonly metadataLocation?: string;
  readonly metadata: TableMetadata;
  /**
   * The metadata's JSON text when this operation just wrote it (the file's own bytes), so the
   * response need not serialize the metadata a second time.
   */
  readonly metadataJson?: string;
  /** Table-specific client configuration (`config` of LoadTableResult). */
  readonly config: ReadonlyMap<string, string>;
}

export interface LoadedView {
  readonly catalogId: string;
  readonly ident: EntityIdent;
  readonly metadataLocation: string;
  readonly metadata: ViewMetadata;
  readonly config: ReadonlyMap<string, string>;
}

/** A metadata file the pointer names but storage does not have: 404 NotFoundException, not a 500. */
export async function readingMetadata<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (e) {
    if (e instanceof FileNotFoundError) throw new CatalogError('NotFoundException', `Metadata file is missing: ${e.location}`, { cause: e });
    throw e;
  }
}
