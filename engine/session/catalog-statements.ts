/**
 * Catalog statements in SQL: CREATE/DROP SCHEMA, CREATE/DROP/ALTER TABLE, DROP VIEW, SHOW
 * CATALOGS/SCHEMAS/TABLES/VIEWS and DESCRIBE, each one call of the catalog service (the same
 * operations the Iceberg REST routes call), its errors turned into the query interface's codes.
 *
 * Names: `t` is a table of the session's schema, `s.t` of the session's catalog, longer names by
 * the binder's namespace-path rule (`c.s.t`, `c.a.b.t`, or `a.b.t` nested in the current catalog;
 * see `NamespaceLookup`).
 */
import { floeError, isFloeError, type FloeError } from '../../grammar/errors.js';
import type { AlterTable, AlterTableAction, OptionEntry, QualifiedName, Statement } from '../../grammar/ir.js';
import { unreachable } from '../../grammar/ir.js';
import { toCatalogError } from '../../catalog/rest/errors.js';
import { StorageError } from '../../storage-creds/file-io.js';
import type { CatalogContext, EntityIdent, Namespace } from '../../catalog/rest/context.js';
import type { CatalogService } from '../../catalog/rest/service.js';
import { schema as makeSchema, findFieldByName, type Schema } from '../../catalog/iceberg/schema.js';
import { currentSchema, defaultPartitionSpec, type TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { isPrimitive, isPromotionAllowed, nestedField, type NestedField } from '../../catalog/iceberg/types.js';
import type { TableRequirement, TableUpdate } from '../../catalog/iceberg/table-updates.js';
import { typeName } from '../system/catalog-tables.js';
import { FieldIds, icebergType, partitionSpecFromSql, refuseColumnConstraints, refuseConstraints, schemaFromColumns } from './schema-from-ir.js';
import { formatNamespacePath, formatTableName } from '../planner/names.js';
import { allNamespaces } from '../system/catalog-tables.js';
import { NamespaceLookup } from './namespace-lookup.js';
import type { RowSet, SessionState, StatementContext } from './query-service.js';
import type { StatementStorage } from '../exec/executor.js';

export interface TableAddress {
  readonly catalog: string;
  readonly ident: EntityIdent;
}

export function catalogContextOf(ctx: StatementContext): CatalogContext {
  return { tenantId: ctx.principal.tenantId, principalId: ctx.principal.principalId, roles: ctx.principal.roles };
}

/** A table or view name as the session reads it. */
/**
 * A table name as the session reads it: `t`, `s.t`, `c.s.t`, `c.a.b.t`, or `a.b.t` for a nested
 * namespace `a.b` of the current catalog: the binder's rule (engine/planner/names.ts), so DDL and
 * queries read a name alike.
 */
export async function tableAddress(lookup: NamespaceLookup, name: QualifiedName, session: SessionState): Promise<TableAddress> {
  const t = await lookup.tableName(name, { catalog: session.catalog, namespace: [session.schema] });
  return { catalog: t.catalog, ident: { namespace: t.namespace, name: t.name } };
}

/** A schema name as the session reads it: `s`, `c.s`, `c.a.b`, or `a.b` nested in the current catalog. */
export async function schemaAddress(lookup: NamespaceLookup, name: QualifiedName | undefined, session: SessionState): Promise<{ catalog: string; namespace: Namespace }> {
  if (name === undefined) return { catalog: session.catalog, namespace: [session.schema] };
  const at = await lookup.namespace(name, session.catalog);
  return { catalog: at.catalog, namespace: [...at.namespace] };
}

const display = (a: TableAddress) => formatTableName({ catalog: a.catalog, namespace: a.ident.namespace, name: a.ident.name });

/** A catalog-service error as the query interface's error (unknown errors pass through as bugs). */
export function sqlErrorOf(e: unknown, what: string): unknown {
  if (isFloeError(e)) return e;
  // A location the warehouse's store cannot hold (a GCS object name with a line break) is the
  // statement's fault; a store still unavailable after its retries is one the client may retry.
  if ((e as { kind?: unknown } | null)?.kind === 'unsupported-location') return floeError('INVALID_REQUEST', { detail: (e as Error).message });
  if (e instanceof StorageError && e.failure === 'unavailable') return floeError('SERVICE_UNAVAILABLE', { detail: e.message });
  const c = toCatalogError(e);
  if (!c) return e;
  switch (c.type) {
    case 'NoSuchTableException': case 'NoSuchViewException': return floeError('UNDEFINED_TABLE', { name: what });
    case 'NoSuchNamespaceException': return floeError('UNDEFINED_SCHEMA', { name: what });
    case 'NoSuchWarehouseException': return floeError('UNDEFINED_CATALOG', { name: what });
    case 'NotFoundException': return floeError('NOT_FOUND', { what: c.message });
    case 'AlreadyExistsException': return floeError('DUPLICATE_OBJECT', { kind: 'object', name: what });
    case 'NamespaceNotEmptyException': return floeError('OBJECT_IN_USE', { detail: `schema ${what} is not empty (use CASCADE)` });
    case 'CommitFailedException': return floeError('COMMIT_CONFLICT', { detail: c.message });
    case 'ForbiddenException': case 'NotAuthorizedException': return floeError('PERMISSION_DENIED', { detail: c.message });
    case 'ServiceUnavailableException': return floeError('SERVICE_UNAVAILABLE', { detail: c.message });
    case 'BadRequestException': case 'ValidationException': case 'UnprocessableEntityException':
      return floeError('INVALID_REQUEST', { detail: c.message });
    case 'UnsupportedOperationException': return floeError('UNSUPPORTED_STATEMENT', { what: c.message });
    case 'CommitStateUnknownException': return floeError('COMMIT_STATE_UNKNOWN', { detail: c.message.replace(/^Commit state unknown: /, '') });
    default: return unreachable(c.type);
  }
}

async function mapped<T>(what: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    throw sqlErrorOf(e, what);
  }
}

function ok(message = 'OK'): RowSet {
  return { columns: ['status'], types: ['VARCHAR'], rows: [[message]] };
}

function properties(entries: readonly OptionEntry[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of entries) m.set(e.key, typeof e.value === 'string' ? e.value : String(e.value));
  return m;
}

/** SQL LIKE (`%`, `_`, case-insensitive as Trino's SHOW … LIKE is not; we follow Snowflake). */
function likeMatcher(pattern: string | undefined): (s: string) => boolean {
  if (pattern === undefined) return () => true;
  const re = new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('%', '.*').replaceAll('_', '.')}$`, 'is');
  return (s) => re.test(s);
}

export class CatalogStatements {
  constructor(private readonly catalog: CatalogService) {}

  async run(ctx: StatementContext, s: Statement): Promise<RowSet> {
    const cc = catalogContextOf(ctx);
    const lookup = new NamespaceLookup(this.catalog, cc);
    switch (s.kind) {
      case 'CreateSchema': {
        const at = await schemaAddress(lookup, s.name, ctx.session);
        const name = [at.catalog, ...at.namespace].join('.');
        try {
          await mapped(name, () => this.catalog.createNamespace(cc, at.catalog, at.namespace, properties(s.properties)));
        } catch (e) {
          if (s.ifNotExists && isFloeError(e) && e.code === 'DUPLICATE_OBJECT') return ok('schema already exists');
          throw e;
        }
        return ok();
      }
      case 'DropSchema': {
        const at = await schemaAddress(lookup, s.name, ctx.session);
        const name = [at.catalog, ...at.namespace].join('.');
        try {
          if (s.cascade) {
            for (const t of await this.allTables(cc, at.catalog, at.namespace)) await mapped(name, () => this.catalog.dropTable(cc, at.catalog, t));
            for (const v of await this.allViews(cc, at.catalog, at.namespace)) await mapped(name, () => this.catalog.dropView(cc, at.catalog, v));
          }
          await mapped(name, () => this.catalog.dropNamespace(cc, at.catalog, at.namespace));
        } catch (e) {
          if (s.ifExists && isFloeError(e) && (e.code === 'UNDEFINED_SCHEMA' || e.code === 'UNDEFINED_CATALOG')) return ok('schema does not exist');
          throw e;
        }
        return ok();
      }
      case 'CreateTable': {
        const at = await tableAddress(lookup, s.name, ctx.session);
        if (s.orReplace) throw floeError('UNSUPPORTED_STATEMENT', { what: 'CREATE OR REPLACE TABLE (drop the table first)' });
        if (s.using !== undefined && s.using !== 'iceberg') throw floeError('UNSUPPORTED_STATEMENT', { what: `USING ${s.using} (Floe tables are Iceberg)` });
        refuseConstraints(s.columns, s.refused, display(at));
        const schema = schemaFromColumns(s.columns, 0, s.primaryKey);
        const props = properties(s.properties);
        if (s.comment !== undefined) props.set('comment', s.comment);
        try {
          await mapped(display(at), () => this.catalog.createTable(cc, at.catalog, at.ident.namespace, {
            name: at.ident.name, schema, partitionSpec: partitionSpecFromSql(s.partitionBy, schema), properties: props,
            ...(s.location !== undefined ? { location: s.location } : {}),
          }));
        } catch (e) {
          if (isFloeError(e) && e.code === 'DUPLICATE_OBJECT') {
            if (s.ifNotExists) return ok('table already exists');
            throw floeError('DUPLICATE_TABLE', { name: display(at) });
          }
          throw e;
        }
        return ok();
      }
      case 'DropTable': {
        const at = await tableAddress(lookup, s.name, ctx.session);
        try {
          await mapped(display(at), () => this.catalog.dropTable(cc, at.catalog, at.ident, { purge: s.purge }));
        } catch (e) {
          if (s.ifExists && isFloeError(e) && ['UNDEFINED_TABLE', 'UNDEFINED_SCHEMA', 'UNDEFINED_CATALOG'].includes(e.code)) return ok('table does not exist');
          throw e;
        }
        return ok();
      }
      case 'AlterTable':
        return this.alterTable(ctx, cc, lookup, s);
      case 'DropView': {
        const at = await tableAddress(lookup, s.name, ctx.session);
        try {
          await mapped(display(at), () => this.catalog.dropView(cc, at.catalog, at.ident));
        } catch (e) {
          if (s.ifExists && isFloeError(e) && ['UNDEFINED_TABLE', 'UNDEFINED_SCHEMA', 'UNDEFINED_CATALOG'].includes(e.code)) return ok('view does not exist');
          throw e;
        }
        return ok();
      }
      case 'ShowCatalogs': {
        const like = likeMatcher(s.like);
        const catalogs = await mapped('catalogs', () => this.catalog.listCatalogs(cc));
        return { columns: ['catalog'], types: ['VARCHAR'], rows: catalogs.map((c) => c.name).filter(like).sort().map((n) => [n]) };
      }
      case 'ShowSchemas': {
        const catalog = s.in === undefined ? ctx.session.catalog : s.in.parts.map((p) => p.name).join('.');
        const like = likeMatcher(s.like);
        const names = (await mapped(catalog, () => allNamespaces(this.catalog, cc, catalog))).map(formatNamespacePath);
        return { columns: ['schema'], types: ['VARCHAR'], rows: names.filter(like).sort().map((n) => [n]) };
      }
      case 'ShowTables':
      case 'ShowViews': {
        const at = await schemaAddress(lookup, s.in, ctx.session);
        const like = likeMatcher(s.like);
        const list = s.kind === 'ShowTables' ? await this.allTables(cc, at.catalog, at.namespace) : await this.allViews(cc, at.catalog, at.namespace);
        return { columns: [s.kind === 'ShowTables' ? 'table' : 'view'], types: ['VARCHAR'], rows: list.map((t) => t.name).filter(like).sort().map((n) => [n]) };
      }
      case 'DescribeTable': {
        const at = await tableAddress(lookup, s.name, ctx.session);
        const loaded = await mapped(display(at), () => this.catalog.loadTable(cc, at.catalog, at.ident));
        const schema = currentSchema(loaded.metadata);
        const partitioned = new Set(defaultPartitionSpec(loaded.metadata).fields.map((f) => f.sourceId));
        return {
          columns: ['column', 'type', 'nullable', 'partition_key', 'primary_key', 'comment'],
          types: ['VARCHAR', 'VARCHAR', 'BOOLEAN', 'BOOLEAN', 'BOOLEAN', 'VARCHAR'],
          // primary_key: the column is one of the schema's identifier fields (PRIMARY KEY in CREATE TABLE).
          rows: schema.fields.map((f) => [f.name, typeName(f.type), !f.required, partitioned.has(f.id), schema.identifierFieldIds.includes(f.id), f.doc ?? null]),
        };
      }
      case 'CreateIndex':
        throw floeError('UNSUPPORTED_INDEX', { statement: 'CREATE INDEX' });
      case 'DropIndex':
        throw floeError('UNSUPPORTED_INDEX', { statement: 'DROP INDEX' });
      default:
        throw floeError('UNSUPPORTED_STATEMENT', { what: s.kind });
    }
  }

  private async allTables(cc: CatalogContext, catalog: string, ns: Namespace): Promise<EntityIdent[]> {
    const out: EntityIdent[] = [];
    let pageToken: string | undefined;
    do {
      const page = await mapped([catalog, ...ns].join('.'), () => this.catalog.listTables(cc, catalog, ns, pageToken === undefined ? undefined : { pageToken }));
      out.push(...page.items);
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    return out;
  }

  private async allViews(cc: CatalogContext, catalog: string, ns: Namespace): Promise<EntityIdent[]> {
    const out: EntityIdent[] = [];
    let pageToken: string | undefined;
    do {
      const page = await mapped([catalog, ...ns].join('.'), () => this.catalog.listViews(cc, catalog, ns, pageToken === undefined ? undefined : { pageToken }));
      out.push(...page.items);
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    return out;
  }

  private async alterTable(ctx: StatementContext, cc: CatalogContext, lookup: NamespaceLookup, s: AlterTable): Promise<RowSet> {
    const at = await tableAddress(lookup, s.name, ctx.session);
    let loaded;
    try {
      loaded = await mapped(display(at), () => this.catalog.loadTable(cc, at.catalog, at.ident));
    } catch (e) {
      if (s.ifExists && isFloeError(e) && e.code === 'UNDEFINED_TABLE') return ok('table does not exist');
      throw e;
    }
    const a = s.action;
    if (a.kind === 'RenameTable') {
      const to = await tableAddress(lookup, a.newName, ctx.session);
      if (to.catalog !== at.catalog) throw floeError('INVALID_PARAMETER', { name: 'RENAME TO', detail: 'a table cannot move to another catalog' });
      await mapped(display(to), () => this.catalog.renameTable(cc, at.catalog, at.ident, to.ident));
      return ok();
    }
    const m = loaded.metadata;
    const change = tableChange(m, a);
    if (change === undefined) return ok('nothing to change');
    await mapped(display(at), () => this.catalog.commitTable(cc, at.catalog, at.ident, change.requirements, change.updates));
    return ok();
  }
}

/** The requirements and updates of one ALTER TABLE action; undefined when it changes nothing. */
export function tableChange(m: TableMetadata, a: Exclude<AlterTableAction, { kind: 'RenameTable' }>): { requirements: TableRequirement[]; updates: TableUpdate[] } | undefined {
  const current = currentSchema(m);
  const withSchema = (fields: readonly NestedField[]) => {
    const schemaId = Math.max(...m.schemas.map((x) => x.schemaId)) + 1;
    const next: Schema = makeSchema(schemaId, fields, current.identifierFieldIds);
    return {
      requirements: [{ type: 'assert-current-schema-id', currentSchemaId: current.schemaId } as TableRequirement],
      updates: [{ action: 'add-schema', schema: next } as TableUpdate, { action: 'set-current-schema', schemaId: -1 } as TableUpdate],
    };
  };
  const topLevel = (path: readonly { name: string }[]) => {
    if (path.length !== 1) throw floeError('UNSUPPORTED_STATEMENT', { what: 'changing a nested field (name a top-level column)' });
    return path[0]!.name;
  };
  switch (a.kind) {
    case 'AddColumn': {
      const name = topLevel(a.path);
      if (findFieldByName(current, name, false)) {
        if (a.ifNotExists) return undefined;
        throw floeError('DUPLICATE_OBJECT', { kind: 'column', name });
      }
      refuseColumnConstraints(name, a.refused);
      if (a.primaryKey) throw floeError('INVALID_PARAMETER', { name, detail: 'a new column cannot be a PRIMARY KEY: existing rows have no value for it' });
      if (a.notNull) throw floeError('INVALID_PARAMETER', { name, detail: 'a new column cannot be NOT NULL: existing rows have no value for it' });
      const ids = new FieldIds(m.lastColumnId + 1);
      const id = ids.take();
      return withSchema([...current.fields, nestedField(id, name, icebergType(a.type, ids), false, a.comment)]);
    }
    case 'DropColumn': {
      const name = topLevel(a.path);
      const field = findFieldByName(current, name, false);
      if (!field) {
        if (a.ifExists) return undefined;
        throw floeError('UNDEFINED_COLUMN', { name });
      }
      if (defaultPartitionSpec(m).fields.some((f) => f.sourceId === field.id)) throw floeError('OBJECT_IN_USE', { detail: `column ${name} is a partition source` });
      if (current.identifierFieldIds.includes(field.id)) throw floeError('OBJECT_IN_USE', { detail: `column ${name} is an identifier field` });
      if (current.fields.length === 1) throw floeError('INVALID_PARAMETER', { name, detail: 'a table needs at least one column' });
      return withSchema(current.fields.filter((f) => f.id !== field.id));
    }
    case 'RenameColumn': {
      const name = topLevel(a.path);
      const field = findFieldByName(current, name, false);
      if (!field) throw floeError('UNDEFINED_COLUMN', { name });
      if (findFieldByName(current, a.newName.name, false) && a.newName.name.toLowerCase() !== name.toLowerCase()) throw floeError('DUPLICATE_OBJECT', { kind: 'column', name: a.newName.name });
      return withSchema(current.fields.map((f) => (f.id === field.id ? { ...f, name: a.newName.name } : f)));
    }
    case 'AlterColumnType': {
      const name = topLevel(a.path);
      const field = findFieldByName(current, name, false);
      if (!field) throw floeError('UNDEFINED_COLUMN', { name });
      const to = icebergType(a.type, new FieldIds(m.lastColumnId + 1));
      if (!isPrimitive(field.type) || !isPrimitive(to) || !isPromotionAllowed(field.type, to)) {
        throw floeError('DATATYPE_MISMATCH', { detail: `cannot change ${name} from ${typeName(field.type)} to ${typeName(to)} (Iceberg allows int → bigint, float → double, and widening a decimal's precision)` });
      }
      return withSchema(current.fields.map((f) => (f.id === field.id ? { ...f, type: to } : f)));
    }
    case 'DropNotNull': {
      const name = topLevel(a.path);
      const field = findFieldByName(current, name, false);
      if (!field) throw floeError('UNDEFINED_COLUMN', { name });
      if (!field.required) return undefined;
      return withSchema(current.fields.map((f) => (f.id === field.id ? { ...f, required: false } : f)));
    }
    case 'SetProperties':
      return { requirements: [], updates: [{ action: 'set-properties', updates: properties(a.properties) }] };
    case 'UnsetProperties': {
      const missing = a.keys.filter((k) => !m.properties.has(k));
      if (missing.length > 0 && !a.ifExists) throw floeError('NOT_FOUND', { what: `table property ${missing.join(', ')}` });
      const removals = a.keys.filter((k) => m.properties.has(k));
      return removals.length === 0 ? undefined : { requirements: [], updates: [{ action: 'remove-properties', removals }] };
    }
    default:
      return unreachable(a);
  }
}

export type { FloeError };

/**
 * How a statement reaches the object-store files of each catalog it reads: the catalog's FileIO,
 * as the statement's principal sees it (the executor fetches through it into the file cache).
 */
export function statementStorage(catalog: CatalogService, ctx: StatementContext): (name: string) => Promise<StatementStorage> {
  const cc = catalogContextOf(ctx);
  return async (name) => {
    const io = await catalog.fileIOFor(cc, name);
    return {
      read: (l) => io.read(l), write: (l, bytes) => io.write(l, bytes), delete: (l) => io.delete(l),
      ...(io.readVersioned !== undefined ? { readVersioned: (l: string) => io.readVersioned!(l) } : {}),
      ...(io.version !== undefined ? { version: (l: string) => io.version!(l) } : {}),
      ...(io.readRangeVersioned !== undefined ? { readRangeVersioned: (l: string, offset: number, length: number) => io.readRangeVersioned!(l, offset, length) } : {}),
    };
  };
}
