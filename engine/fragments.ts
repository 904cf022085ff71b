/**
 * The contract between the planner (`engine/planner/`, pure: IR + catalog facts → a fragment plan)
 * and the executor (`engine/exec/`, the piscina pool of DuckDB workers that runs fragments).
 *
 * A query becomes one or more fragments. Each fragment is DuckDB SQL that names its inputs as
 * relations: table scans (`TableScanInput.relation`, e.g. `__floe_scan_0`) and the results of
 * earlier fragments (`fragmentRelation(id)`). The executor decides how a scan becomes DuckDB (a
 * `read_parquet` over the planned files with a field-id schema, deletes applied) and how one
 * fragment's result reaches the next; the planner decides what to read and how to split the work.
 * Nothing here holds SQL typed by a user: `grammar/` has already turned that into IR.
 */
import type { FileScanTask } from '../catalog/iceberg/scan.js';
import type { PartitionSpec } from '../catalog/iceberg/partition-spec.js';
import type { Schema } from '../catalog/iceberg/schema.js';
import type { NestedField } from '../catalog/iceberg/types.js';
import type { LocationMapping } from '../storage-creds/file-io.js';
import type { ScanPredicate } from './planner/predicates.js';

/** One Iceberg table read, as planned. */
export interface TableScanInput {
  /** The relation name the fragment SQL uses for this scan (`__floe_scan_<n>`). */
  readonly relation: string;
  /** `catalog.namespace.table`, for messages and history. */
  readonly tableName: string;
  /** The table's catalog (whose storage holds its files). */
  readonly catalog?: string;
  /** The schema to read with (field ids are the truth; names are the current names). */
  readonly schema: Schema;
  /** Field ids of the top-level columns the query reads, in schema order; 'all' reads every column. */
  readonly columns: readonly number[] | 'all';
  /** Data files to read, each with the delete files that apply; locations are readable local paths. */
  readonly tasks: readonly FileScanTask[];
  /** The table's `schema.name-mapping.default` (JSON text), for files written without field ids. */
  readonly nameMapping?: string;
  /**
   * Predicates to prune by column metrics once the reader knows which files carry Parquet field ids
   * (name-mapped tables only; the planner pruned by partitions alone, see `PruneContext.useMetrics`).
   */
  readonly metricPredicates?: readonly ScanPredicate[];
  /** Rows the manifests promise before deletes (estimates and history). */
  readonly estimatedRows: number;
  /** Bytes of the data files planned (history's `bytes_scanned`). */
  readonly estimatedBytes: number;
  /**
   * Location remapping of the table's catalog (tables registered from elsewhere). The executor maps
   * task locations with it before reading, and maps the data file paths written inside position
   * delete files the same way, so tasks may carry the locations exactly as the manifests list them.
   */
  readonly locationMappings?: readonly LocationMapping[];
  /**
   * Local copies of files on object storage (location as the manifests list it → local path),
   * fetched into the read-through cache for this query; files not listed are read where they are.
   */
  readonly localFiles?: ReadonlyMap<string, string>;
  /**
   * The table's partition specs (by `specId`). With them, identity-partitioned columns are read from
   * the manifests' partition values, as the spec requires for files written without partition
   * columns (`write.data.partition-columns=false`).
   */
  readonly partitionSpecs?: readonly PartitionSpec[];
  /**
   * Row-level writes: the scan also yields `__floe_file_path` (the data file's location as the
   * manifests list it) and `__floe_pos` (the row's 0-based position in that file), from which
   * copy-on-write finds the files to rewrite and merge-on-read writes position deletes.
   */
  readonly rowPositions?: boolean;
}

/**
 * One read of a Floe system table (`system.query_history`, …). The caller's system-table provider
 * yields the rows; the executor makes them visible to the fragment as `relation` with `columns`.
 * Plans with system scans are always one fragment.
 */
export interface SystemScanInput {
  /** The relation name the fragment SQL uses (`__floe_system_<n>`). */
  readonly relation: string;
  /** The system table, without the `system.` prefix (`query_history`). */
  readonly table: string;
  /** The provider's columns, in order. */
  readonly columns: readonly string[];
  /**
   * The rows as a DuckDB query (typed VALUES), filled in by the session from the provider before the
   * plan runs: the worker binds it under `relation` like a scan. The planner leaves it out.
   */
  readonly sql?: string;
}

/** A unit of work for one worker. */
export interface Fragment {
  readonly id: number;
  /** DuckDB SQL of one query; it reads only its `scans` and its `inputs` by relation name. */
  readonly sql: string;
  readonly scans: readonly TableScanInput[];
  /** Ids of earlier fragments whose results this fragment reads (as `fragmentRelation(id)`). */
  readonly inputs: readonly number[];
  /** System tables this fragment reads (absent when none). */
  readonly systemScans?: readonly SystemScanInput[];
}

/** What the planner hands the executor. Fragments are in dependency order; the last one answers. */
export interface FragmentPlan {
  readonly fragments: readonly Fragment[];
}

/** The relation name under which a fragment's result is visible to the fragments that read it. */
export function fragmentRelation(id: number): string {
  return `__floe_fragment_${id}`;
}

/** The relation name of the n-th scan of a plan. */
export function scanRelation(n: number): string {
  return `__floe_scan_${n}`;
}

/**
 * The name a scan relation gives a top-level field. Iceberg names are case-sensitive and DuckDB's are
 * not: when two fields of the schema differ only in case (`user_id`, `uSeR_Id`), each is exposed
 * as `__floe_f<id>__<name>`, so each reads its own data; the binder maps quoted exact names onto
 * these and refuses unquoted ones as ambiguous. Every other field keeps its name.
 */
export function scanColumnName(schema: Schema, f: NestedField): string {
  return caseCollidingFieldIds(schema).has(f.id) ? `__floe_f${f.id}__${f.name}` : f.name;
}

/** Ids of the top-level fields whose name another field shares when case is ignored. */
export function caseCollidingFieldIds(schema: Schema): ReadonlySet<number> {
  const byLower = new Map<string, number[]>();
  for (const f of schema.fields) {
    const key = f.name.toLowerCase();
    byLower.set(key, [...(byLower.get(key) ?? []), f.id]);
  }
  return new Set([...byLower.values()].filter((ids) => ids.length > 1).flat());
}
