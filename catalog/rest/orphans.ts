/**
 * Orphan files of a catalog (issue 17, item 3): objects under a table's location that no metadata
 * of the table refers to — an upload whose commit never happened (a failed write that could not
 * delete what it uploaded, a server that died between upload and commit), or files of snapshots
 * expired without cleanup. This lists them; it deletes nothing.
 *
 * Referenced means: the current metadata file and those of its metadata log, every snapshot's
 * manifest list and manifests, every live (added or existing) data and delete file of every
 * snapshot, and the statistics files. A file written after `olderThanMs` is left out, since a write
 * in flight uploads its files before it commits them.
 */
import { FileNotFoundError, type FileInfo } from '../../storage-creds/file-io.js';
import { readManifest } from '../iceberg/manifest.js';
import { loadManifestFiles } from '../iceberg/scan.js';
import type { CatalogContext, EntityIdent, Namespace } from './context.js';
import type { CatalogService } from './service.js';

export interface OrphanFile extends FileInfo {
  /** `namespace.table` whose location holds it. */
  readonly table: string;
}

export interface OrphanReport {
  readonly tables: number;
  readonly filesListed: number;
  readonly orphans: readonly OrphanFile[];
}

async function allNamespaces(catalog: CatalogService, ctx: CatalogContext, name: string, parent?: Namespace): Promise<Namespace[]> {
  const out: Namespace[] = [];
  let token: string | undefined;
  do {
    const page = await catalog.listNamespaces(ctx, name, parent, token === undefined ? {} : { pageToken: token });
    for (const ns of page.items) out.push(ns, ...await allNamespaces(catalog, ctx, name, ns));
    token = page.nextPageToken;
  } while (token !== undefined);
  return out;
}

async function allTables(catalog: CatalogService, ctx: CatalogContext, name: string, ns: Namespace): Promise<EntityIdent[]> {
  const out: EntityIdent[] = [];
  let token: string | undefined;
  do {
    const page = await catalog.listTables(ctx, name, ns, token === undefined ? {} : { pageToken: token });
    out.push(...page.items);
    token = page.nextPageToken;
  } while (token !== undefined);
  return out;
}

/** Every orphan file under the tables of `catalogName`, oldest first per table. */
export async function findOrphans(catalog: CatalogService, ctx: CatalogContext, catalogName: string, options: { readonly olderThanMs?: number } = {}): Promise<OrphanReport> {
  const io = await catalog.fileIOFor(ctx, catalogName);
  const orphans: OrphanFile[] = [];
  let tables = 0;
  let filesListed = 0;
  for (const ns of await allNamespaces(catalog, ctx, catalogName)) {
    for (const ident of await allTables(catalog, ctx, catalogName, ns)) {
      tables++;
      const loaded = await catalog.loadTable(ctx, catalogName, ident);
      const m = loaded.metadata;
      const referenced = new Set<string>();
      if (loaded.metadataLocation !== undefined) referenced.add(loaded.metadataLocation);
      for (const l of m.metadataLog) referenced.add(l.metadataFile);
      for (const s of m.statistics) referenced.add(s.statisticsPath);
      for (const s of m.partitionStatistics) referenced.add(s.statisticsPath);
      const manifests = new Set<string>();
      for (const snapshot of m.snapshots) {
        if (snapshot.manifestList !== undefined) referenced.add(snapshot.manifestList);
        for (const mf of await loadManifestFiles(io, snapshot).catch(absentAsNone)) manifests.add(mf.manifestPath);
      }
      for (const path of manifests) {
        referenced.add(path);
        const bytes = await io.read(path).catch(absentAsNone);
        // A missing manifest (a broken table) lists nothing as referenced, and nothing is deleted here.
        if (!Array.isArray(bytes)) for (const e of readManifest(bytes).entries) if (e.status !== 'deleted') referenced.add(e.dataFile.filePath);
      }
      const listed = await io.list(`${m.location.replace(/\/+$/, '')}/`);
      filesListed += listed.length;
      const table = `${ident.namespace.join('.')}.${ident.name}`;
      const cutoff = options.olderThanMs;
      for (const f of listed) {
        if (referenced.has(f.location) || referenced.has(withoutScheme(f.location))) continue;
        if (cutoff !== undefined && f.lastModifiedMs > cutoff) continue;
        orphans.push({ ...f, table });
      }
    }
  }
  return { tables, filesListed, orphans };
}

/** A metadata file that is gone refers to nothing (it cannot be an orphan itself). */
function absentAsNone(e: unknown): never[] {
  if (e instanceof FileNotFoundError) return [];
  throw e;
}

/** `file:///a/b` and `/a/b` name the same local file (metadata may hold either spelling). */
function withoutScheme(location: string): string {
  return location.startsWith('file://') ? location.slice('file://'.length) : `file://${location}`;
}
