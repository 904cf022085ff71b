/** Drop a table; with purge, delete the files its metadata references. */
import { readManifest } from '../../../iceberg/manifest.js';
import { readManifestList } from '../../../iceberg/manifest-list.js';
import type { TableMetadata } from '../../../iceberg/table-metadata.js';
import type { FileIO } from '../../../../storage-creds/file-io.js';
import type { CatalogContext, EntityIdent } from '../../context.js';
import { validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { requireCatalog } from '../../resolve.js';
import { deleteEntity } from '../../store.js';
import { requireTable } from './common.js';

/**
 * Drops the table row. With `purge`, then deletes every file the metadata references (metadata
 * files, manifest lists, manifests, data and delete files, statistics), as Java's
 * `CatalogUtil.dropTableData`, and the table folder itself when it lies inside the warehouse.
 */
export async function dropTable(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent, options: { readonly purge?: boolean } = {}): Promise<void> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const dropped = await deps.store.transaction(async (tx) => {
    const row = await requireTable(tx, catalog, ident, 'FOR UPDATE');
    await deleteEntity(tx, row.id);
    return row;
  });
  if (options.purge !== true) return;
  const metadata = await deps.files.readTable(catalog, dropped.metadataLocation).catch(() => undefined);
  const io = deps.files.ioFor(catalog);
  if (metadata !== undefined) await purgeTableFiles(io, metadata, dropped.metadataLocation);
  else await io.delete(dropped.metadataLocation);
  const warehouse = `${catalog.warehouseLocation.replace(/\/+$/, '')}/`;
  if (metadata !== undefined && `${metadata.location}/`.startsWith(warehouse) && metadata.location.length + 1 > warehouse.length) {
    await io.deletePrefix(`${metadata.location.replace(/\/+$/, '')}/`);
  }
}

/** Deletes the files a table's metadata references. Missing files are skipped. */
export async function purgeTableFiles(io: FileIO, m: TableMetadata, metadataLocation: string): Promise<void> {
  const files = new Set<string>();
  for (const s of m.snapshots) {
    const lists = s.manifestList !== undefined ? [s.manifestList] : [];
    for (const list of lists) {
      files.add(list);
      const bytes = await io.read(list).catch(() => undefined);
      if (bytes === undefined) continue;
      for (const mf of readManifestList(bytes).manifests) {
        files.add(mf.manifestPath);
        const mbytes = await io.read(mf.manifestPath).catch(() => undefined);
        if (mbytes === undefined) continue;
        for (const entry of readManifest(mbytes).entries) files.add(entry.dataFile.filePath);
      }
    }
    for (const manifest of s.manifests ?? []) files.add(manifest);
  }
  for (const st of m.statistics) files.add(st.statisticsPath);
  for (const st of m.partitionStatistics) files.add(st.statisticsPath);
  for (const e of m.metadataLog) files.add(e.metadataFile);
  files.add(metadataLocation);
  const all = [...files];
  for (let i = 0; i < all.length; i += 32) await Promise.all(all.slice(i, i + 32).map((f) => io.delete(f).catch(() => undefined)));
}
