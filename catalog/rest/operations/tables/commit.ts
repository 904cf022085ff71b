/**
 * The commit protocol (architecture "A catalog commit"), shared by `commitTable`,
 * `commitTransaction` and the SQL engine's writes:
 *
 * 1. Validation: identifiers, no table twice in one transaction.
 * 2. In one store transaction: lock the table rows with one `SELECT … FOR UPDATE` ordered by
 *    (namespace, name), so concurrent multi-table commits lock in the same order and cannot
 *    deadlock; check every requirement against the current metadata; apply the updates in memory.
 * 3. Write each new `NNNNN-<uuid>.metadata.json` (create-if-absent) through FileIO, then swap each
 *    pointer by compare-and-swap on the previous location, and commit.
 * 4. A requirement that fails → 409 `CommitFailedException`, and files written by this attempt are
 *    deleted (they were never referenced). If the store is lost after COMMIT was sent, the outcome
 *    is unknowable → `CommitStateUnknownException` (5xx), and the files are kept, because the commit
 *    may have succeeded and one of them may now be the table's current metadata.
 *
 * A table that does not exist may be created by a commit whose requirements include
 * `assert-create` (stage-create, then commit), as Java's REST server does.
 */
import { assertRequirements, applyUpdates } from '../../../iceberg/table-commit.js';
import { nextMetadataLocation, type TableMetadata } from '../../../iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../../../iceberg/table-updates.js';
import { isStoreUnavailable, sqlState, type SqlExecutor } from '../../../store/meta-store.js';
import type { CatalogContext, EntityIdent } from '../../context.js';
import { namespaceKey, qualifiedName, validateEntityName, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { badRequest, CatalogError, noSuchNamespace, noSuchTable, toCatalogError } from '../../errors.js';
import { readingMetadata, type LoadedTable } from '../../loaded.js';
import { requireCatalog } from '../../resolve.js';
import { insertEntity, lockEntitiesInCatalog, swapMetadataLocation, type CatalogRecord, type EntityRecord } from '../../store.js';
import { NO_CONFIG } from './common.js';
import { sameClaims, tableClaims } from '../../locations.js';

/** Table property: delete metadata files that fall out of metadata-log (Java's default: false). */
export const DELETE_AFTER_COMMIT_PROPERTY = 'write.metadata.delete-after-commit.enabled';

/**
 * Files of `base`'s metadata log (and `base` itself) that `next` no longer lists, when `next` has
 * `write.metadata.delete-after-commit.enabled=true`, as Java's `TableOperations` deletes them.
 */
export function droppedMetadataFiles(base: TableMetadata, baseLocation: string, next: TableMetadata): readonly string[] {
  if (next.properties.get(DELETE_AFTER_COMMIT_PROPERTY)?.toLowerCase() !== 'true') return [];
  const kept = new Set(next.metadataLog.map((e) => e.metadataFile));
  return [...base.metadataLog.map((e) => e.metadataFile), baseLocation].filter((f) => !kept.has(f));
}

/** One table's part of a commit. */
export interface TableChange {
  readonly ident: EntityIdent;
  readonly requirements: readonly TableRequirement[];
  readonly updates: readonly TableUpdate[];
}

/**
 * Work the caller does inside the commit's store transaction, after the pointers are swapped and
 * before COMMIT: it commits with the tables or not at all (COPY INTO's load history). It may throw
 * to abort the commit; its error is rethrown as it is.
 */
export type DuringCommit = (tx: SqlExecutor, committed: readonly LoadedTable[]) => Promise<void>;

/** Commits one table's changes; returns the new state. */
export async function commitTable(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, change: TableChange, duringCommit?: DuringCommit): Promise<LoadedTable> {
  const [result] = await commitTables(deps, ctx, catalogName, [change], duringCommit);
  return result as LoadedTable;
}

/** Commits changes to several tables atomically: all or nothing. Results in input order. */
export async function commitTables(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, changes: readonly TableChange[], duringCommit?: DuringCommit): Promise<readonly LoadedTable[]> {
  // Validation
  if (changes.length === 0) throw badRequest('Invalid commit: no table changes');
  const seen = new Set<string>();
  for (const c of changes) {
    validateNamespace(c.ident.namespace);
    validateEntityName(c.ident.name, 'table');
    const key = `${namespaceKey(c.ident.namespace)}\u0000${c.ident.name}`;
    if (seen.has(key)) throw badRequest(`Invalid commit: table ${qualifiedName(c.ident)} appears more than once`);
    seen.add(key);
  }
  // Business logic. Authorization: the catalog is resolved within the caller's tenant only, in the
  // same statement that locks the rows.
  const written: string[] = [];
  let catalog: CatalogRecord | undefined;
  let commitSent = false;
  /** Metadata files that fell out of metadata-log, deleted after the commit when the table asks for it. */
  const obsolete: string[] = [];
  try {
    const results = await deps.store.transaction(async (tx) => {
      const locked = await lockEntitiesInCatalog(tx, ctx.tenantId, catalogName, changes.map((c) => ({ namespaceKey: namespaceKey(c.ident.namespace), name: c.ident.name })));
      const rows = locked.rows;
      const cat = locked.catalog ?? (await requireCatalog(tx, ctx, catalogName));
      catalog = cat;
      const byKey = new Map<string, EntityRecord>(rows.map((r) => [`${r.namespaceKey}\u0000${r.name}`, r]));
      const now = deps.clock.now();
      const out: LoadedTable[] = [];
      for (const change of changes) {
        const row = byKey.get(`${namespaceKey(change.ident.namespace)}\u0000${change.ident.name}`);
        const creating = change.requirements.some((r) => r.type === 'assert-create');
        if (row !== undefined && row.kind !== 'table') {
          throw creating ? new CatalogError('AlreadyExistsException', `View with same name already exists: ${qualifiedName(change.ident)}`) : noSuchTable(change.ident.namespace, change.ident.name);
        }
        if (row === undefined && !creating) throw noSuchTable(change.ident.namespace, change.ident.name);
        const base: TableMetadata | undefined = row === undefined ? undefined : await readingMetadata(deps.files.readTable(cat, row.metadataLocation));
        assertRequirements(base, change.requirements);
        const next = applyUpdates(base, change.updates, {
          now,
          ...(row !== undefined ? { previousMetadataLocation: row.metadataLocation } : {}),
          newTableUuid: deps.newUuid(),
        });
        if (row !== undefined && next === base) {
          out.push({ catalogId: cat.id, ident: change.ident, metadataLocation: row.metadataLocation, metadata: base, config: NO_CONFIG });
          continue;
        }
        // A commit that moves the table's files (location, write.data.path, …) is checked under the
        // catalog's location lock, taken after the row locks above; most commits move nothing.
        const claims = tableClaims(next);
        const moved = base === undefined || !sameClaims(tableClaims(base), claims);
        if (moved) await deps.locations.assertFree(tx, cat, 'table', change.ident, claims, 'commit');
        const location = nextMetadataLocation(next, row?.metadataLocation, deps.newUuid());
        written.push(location);
        const metadataJson = await deps.files.writeTable(cat, location, next);
        let entityId: string;
        if (row === undefined) {
          let inserted: EntityRecord | undefined;
          try {
            inserted = await insertEntity(tx, { id: next.tableUuid, tenantId: ctx.tenantId, catalogId: cat.id, namespaceKey: namespaceKey(change.ident.namespace), name: change.ident.name, kind: 'table', metadataLocation: location });
          } catch (e) {
            if (sqlState(e) === '23503') throw noSuchNamespace(change.ident.namespace);
            if (sqlState(e) === '23505') throw new CatalogError('CommitFailedException', `Requirement failed: table already exists: ${qualifiedName(change.ident)}`);
            throw e;
          }
          if (inserted === undefined) throw new CatalogError('CommitFailedException', `Requirement failed: table already exists: ${qualifiedName(change.ident)}`);
          entityId = inserted.id;
        } else if (!(await swapMetadataLocation(tx, row.id, row.metadataLocation, location, !moved))) {
          throw new CatalogError('CommitFailedException', `Commit failed: table ${qualifiedName(change.ident)} changed concurrently`);
        } else {
          entityId = row.id;
        }
        // Stored anew when they moved, and for a row whose stored locations were not current (a
        // table from before they were kept): the metadata is at hand.
        if (moved || row?.locationsOf !== row?.metadataLocation) await deps.locations.record(tx, cat, entityId, location, claims);
        out.push({ catalogId: cat.id, ident: change.ident, metadataLocation: location, metadata: next, metadataJson, config: NO_CONFIG });
        if (base !== undefined && row !== undefined) obsolete.push(...droppedMetadataFiles(base, row.metadataLocation, next));
      }
      if (duringCommit !== undefined) await duringCommit(tx, out);
      commitSent = true;
      return out;
    });
    if (obsolete.length > 0 && catalog !== undefined) await deps.files.discard(catalog, obsolete);
    return results;
  } catch (e) {
    const known = toCatalogError(e);
    if (commitSent && known === undefined) {
      throw new CatalogError('CommitStateUnknownException', `Commit state unknown: the metadata store failed while committing (${(e as Error).message})`, { cause: e });
    }
    if (written.length > 0 && catalog !== undefined) await deps.files.discard(catalog, written);
    if (known !== undefined) throw known;
    if (sqlState(e) === '40P01' || sqlState(e) === '40001') throw new CatalogError('CommitFailedException', 'Commit failed: concurrent update, retry', { cause: e });
    if (isStoreUnavailable(e)) throw e;
    throw e;
  }
}
