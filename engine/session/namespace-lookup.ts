/**
 * Names of three or more parts (`a.b.t`) read as catalog `a`, namespace `b`, or as namespace `a.b`
 * of the current catalog, whichever exists (engine/planner/names.ts has the rule). This asks the
 * catalog service whether each namespace the rule needs exists, for the binder and for the
 * statements that name a table or schema themselves (writes, DDL).
 */
import type { QualifiedName } from '../../grammar/ir.js';
import { floeError } from '../../grammar/errors.js';
import { toCatalogError } from '../../catalog/rest/errors.js';
import type { CatalogContext } from '../../catalog/rest/context.js';
import type { CatalogService } from '../../catalog/rest/service.js';
import { identName, namespaceKey, resolveNamespacePath, resolveTableRef, type NameDefaults, type NamespaceRef, type TableName } from '../planner/names.js';

/** Two questions settle any name (the nested reading, then the catalog reading); more is a bug. */
const MAX_LOOKUPS = 3;

export class NamespaceLookup {
  /** What has been asked so far, by `namespaceKey`: the binder's `namespaces` facts. */
  readonly facts = new Map<string, boolean>();

  constructor(
    private readonly catalog: CatalogService,
    private readonly context: CatalogContext,
  ) {}

  /** Finds out whether each namespace exists. */
  async learn(refs: readonly NamespaceRef[]): Promise<void> {
    await Promise.all(refs.map(async (ref) => this.facts.set(namespaceKey(ref), await this.exists(ref))));
  }

  /** A table name as the binder reads it (see `resolveTableRef`). */
  async tableName(ref: QualifiedName, defaults: NameDefaults): Promise<TableName> {
    for (let i = 0; i < MAX_LOOKUPS; i++) {
      const r = resolveTableRef(ref, defaults, this.facts);
      if (r.kind === 'resolved') return r.name;
      await this.learn([r.namespace]);
    }
    throw new Error('namespace resolution did not settle');
  }

  /** A schema name (`s`, `c.s`, `a.b`, …) as a catalog and namespace (see `resolveNamespacePath`). */
  async namespace(ref: QualifiedName, currentCatalog: string): Promise<NamespaceRef> {
    const parts = ref.parts.map(identName);
    for (let i = 0; i < MAX_LOOKUPS; i++) {
      const r = resolveNamespacePath(parts, currentCatalog, this.facts);
      if (r.kind === 'resolved') return { catalog: r.catalog, namespace: r.namespace };
      await this.learn([r.namespace]);
    }
    throw new Error('namespace resolution did not settle');
  }

  /**
   * A namespace the principal cannot see, or in a catalog that does not exist, counts as absent:
   * it cannot be what the statement means, and saying otherwise would reveal it.
   */
  private async exists(ref: NamespaceRef): Promise<boolean> {
    try {
      return await this.catalog.namespaceExists(this.context, ref.catalog, ref.namespace);
    } catch (e) {
      const c = toCatalogError(e);
      if (c && ['NoSuchWarehouseException', 'NoSuchNamespaceException', 'ForbiddenException', 'NotAuthorizedException', 'BadRequestException', 'ValidationException'].includes(c.type)) return false;
      if (c) throw floeError('SERVICE_UNAVAILABLE', { detail: `could not resolve ${[ref.catalog, ...ref.namespace].join('.')}: ${c.message}` });
      throw e;
    }
  }
}
