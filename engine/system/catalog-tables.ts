/**
 * `system.namespaces` and `system.tables`: the tenant's catalog as rows, from the catalog service
 * (the same operations the REST catalog serves). `GET /api/tables` and
 * `GET /api/catalogs/:catalog/namespaces/:namespace/tables/:table` read these providers too.
 * Equality filters on catalog, schema and name are pushed into the listing; a table's metadata is
 * loaded only for the rows that survive them.
 */
import type { CatalogContext, Namespace } from '../../catalog/rest/context.js';
import type { CatalogService } from '../../catalog/rest/service.js';
import { currentSchema, currentSnapshot, defaultPartitionSpec, type TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { transformToString } from '../../catalog/iceberg/transforms.js';
import { isPrimitive, primitiveToString, type IcebergType } from '../../catalog/iceberg/types.js';
import { unreachable } from '../../grammar/ir.js';
import { formatNamespacePath } from '../planner/names.js';
import type { SystemColumn, SystemPushdown, SystemRow, SystemTableProvider, SystemViewer } from './provider.js';

function contextOf(viewer: SystemViewer): CatalogContext {
  return { tenantId: viewer.tenantId, principalId: viewer.principalId, roles: viewer.isTenantAdmin ? ['tenant_admin'] : [] };
}

/** An Iceberg type as the query interface names it (`bigint`, `decimal(10,2)`, `list<varchar>`, …). */
export function typeName(t: IcebergType): string {
  if (isPrimitive(t)) {
    switch (t.kind) {
      case 'long': return 'bigint';
      case 'string': return 'varchar';
      default: return primitiveToString(t);
    }
  }
  switch (t.kind) {
    case 'struct': return `struct<${t.fields.map((f) => `${f.name}: ${typeName(f.type)}`).join(', ')}>`;
    case 'list': return `list<${typeName(t.element)}>`;
    case 'map': return `map<${typeName(t.key)}, ${typeName(t.value)}>`;
    default: return unreachable(t);
  }
}

/** Partition fields as `col` or `transform(col)`; bucket and truncate carry their parameter first. */
export function partitionExpressionsOf(m: TableMetadata): string[] {
  const s = currentSchema(m);
  return defaultPartitionSpec(m).fields.map((f) => {
    const source = s.fields.find((c) => c.id === f.sourceId)?.name ?? `#${f.sourceId}`;
    const t = transformToString(f.transform);
    if (t === 'identity') return source;
    const p = /^(bucket|truncate)\[(\d+)\]$/.exec(t);
    return p ? `${p[1]}(${p[2]}, ${source})` : `${t}(${source})`;
  });
}

async function allPages<T>(page: (token: string | undefined) => Promise<{ items: readonly T[]; nextPageToken?: string }>): Promise<T[]> {
  const out: T[] = [];
  let token: string | undefined;
  do {
    const p = await page(token);
    out.push(...p.items);
    token = p.nextPageToken;
  } while (token !== undefined);
  return out;
}

/**
 * Every namespace of a catalog, nested ones included (a namespace `a.b` created over REST, as Spark
 * and PyIceberg do), parents before children, in name order.
 */
export async function allNamespaces(catalog: CatalogService, cc: CatalogContext, catalogName: string): Promise<Namespace[]> {
  const out: Namespace[] = [];
  const walk = async (parent: Namespace | undefined): Promise<void> => {
    const children = await allPages<Namespace>((t) => catalog.listNamespaces(cc, catalogName, parent, t === undefined ? undefined : { pageToken: t }));
    for (const ns of children) {
      out.push(ns);
      await walk(ns);
    }
  };
  await walk(undefined);
  return out;
}

export class NamespacesProvider implements SystemTableProvider {
  readonly name = 'namespaces';
  readonly columns: readonly SystemColumn[] = [
    { name: 'catalog', type: 'VARCHAR' },
    { name: 'schema', type: 'VARCHAR' },
  ];
  constructor(private readonly catalog: CatalogService) {}

  async rows(viewer: SystemViewer, pushdown: SystemPushdown = {}): Promise<readonly SystemRow[]> {
    const cc = contextOf(viewer);
    const only = pushdown.equals?.get('catalog');
    const catalogs = (await this.catalog.listCatalogs(cc)).map((c) => c.name).filter((n) => only === undefined || n === only).sort();
    const rows: SystemRow[] = [];
    for (const c of catalogs) {
      for (const ns of await allNamespaces(this.catalog, cc, c)) rows.push({ catalog: c, schema: formatNamespacePath(ns) });
    }
    return rows;
  }
}

export class TablesProvider implements SystemTableProvider {
  readonly name = 'tables';
  readonly columns: readonly SystemColumn[] = [
    { name: 'catalog', type: 'VARCHAR' },
    { name: 'schema', type: 'VARCHAR' },
    { name: 'name', type: 'VARCHAR' },
    { name: 'format_version', type: 'INTEGER' },
    { name: 'location', type: 'VARCHAR' },
    { name: 'partition_spec', type: 'VARCHAR[]' },
    { name: 'snapshot_count', type: 'BIGINT' },
    { name: 'record_count', type: 'BIGINT' },
    { name: 'current_snapshot_id', type: 'VARCHAR' },
    { name: 'last_updated_at', type: 'TIMESTAMPTZ' },
  ];
  constructor(private readonly catalog: CatalogService) {}

  /** The tables' names only (no metadata loaded): what `GET /api/tables` needs. Nested namespaces included. */
  async names(viewer: SystemViewer, catalogName: string): Promise<{ catalog: string; schema: string; name: string }[]> {
    return (await this.located(viewer, catalogName)).map(({ catalog, schema, name }) => ({ catalog, schema, name }));
  }

  /** Every table of a catalog with its namespace's levels (the `schema` shown is their path form). */
  private async located(viewer: SystemViewer, catalogName: string): Promise<{ catalog: string; schema: string; namespace: Namespace; name: string }[]> {
    const cc = contextOf(viewer);
    const out: { catalog: string; schema: string; namespace: Namespace; name: string }[] = [];
    for (const ns of await allNamespaces(this.catalog, cc, catalogName)) {
      const tables = await allPages((t) => this.catalog.listTables(cc, catalogName, ns, t === undefined ? undefined : { pageToken: t }));
      for (const tb of tables) out.push({ catalog: catalogName, schema: formatNamespacePath(ns), namespace: ns, name: tb.name });
    }
    return out;
  }

  /** One table's metadata, loaded. */
  async describe(viewer: SystemViewer, catalogName: string, namespace: Namespace, name: string): Promise<TableMetadata> {
    return (await this.catalog.loadTable(contextOf(viewer), catalogName, { namespace, name })).metadata;
  }

  async rows(viewer: SystemViewer, pushdown: SystemPushdown = {}): Promise<readonly SystemRow[]> {
    const cc = contextOf(viewer);
    const eq = pushdown.equals;
    const catalogs = (await this.catalog.listCatalogs(cc)).map((c) => c.name).filter((n) => eq?.get('catalog') === undefined || n === eq.get('catalog')).sort();
    const rows: SystemRow[] = [];
    for (const c of catalogs) {
      for (const t of await this.located(viewer, c)) {
        if (eq?.get('schema') !== undefined && t.schema !== eq.get('schema')) continue;
        if (eq?.get('name') !== undefined && t.name !== eq.get('name')) continue;
        let m: TableMetadata;
        try {
          m = await this.describe(viewer, c, t.namespace, t.name);
        } catch {
          continue; // dropped between the listing and the load, or its metadata file is gone
        }
        rows.push(tableRow(t, m));
      }
    }
    return rows;
  }
}

/** A table's `system.tables` row. */
export function tableRow(t: { catalog: string; schema: string; name: string }, m: TableMetadata): SystemRow {
  const snap = currentSnapshot(m);
  const total = snap?.summary.get('total-records');
  return {
    catalog: t.catalog, schema: t.schema, name: t.name, format_version: m.formatVersion, location: m.location,
    partition_spec: partitionExpressionsOf(m), snapshot_count: m.snapshots.length,
    record_count: total !== undefined && /^\d+$/.test(total) ? Number(total) : 0,
    current_snapshot_id: snap === undefined ? null : snap.snapshotId.toString(),
    last_updated_at: new Date(m.lastUpdatedMs),
  };
}

/** The query interface's table metadata (`GET /api/catalogs/…/tables/:table`). */
export function tableMetadataAnswer(name: string, m: TableMetadata): Record<string, unknown> {
  const row = tableRow({ catalog: '', schema: '', name }, m);
  return {
    name,
    schema: { fields: currentSchema(m).fields.map((f) => ({ name: f.name, type: typeName(f.type), nullable: !f.required })) },
    partition_spec: row.partition_spec,
    snapshot_count: row.snapshot_count,
    record_count: row.record_count,
  };
}
