/**
 * Stages: named folders of files to load, per catalog, and each user's own stage (`@~`), stored in
 * the metadata store (migration 0011) with their files inside the catalog's warehouse:
 *
 *   <warehouse>/stages/<stage id>/          a named stage (or its URL, which must lie under stages/)
 *   <warehouse>/stages/users/<principal>/   the user's stage of that catalog
 *
 * Access is checked on every use (statements and the /v1/stages endpoints alike, `resolve`): a
 * named stage may be used by its owner, tenant_admin, and whoever holds USAGE on it (granted to the
 * user or to one of their roles); the user's stage by that user only. Dropping and granting are
 * for the owner and tenant_admin.
 */
import { randomUUID } from 'node:crypto';
import { floeError } from '../../grammar/errors.js';
import type { OptionValue } from '../../grammar/ir.js';
import type { MetaStore, SqlExecutor } from '../../catalog/store/meta-store.js';
import type { CatalogService } from '../../catalog/rest/service.js';
import type { CatalogContext } from '../../catalog/rest/context.js';
import type { CatalogRecord } from '../../catalog/rest/store.js';
import { sqlErrorOf } from '../session/catalog-statements.js';
import { isTenantAdmin } from '../principals/privileges.js';
import { StageFiles } from './stage-files.js';
import type { StageRef } from './stage-path.js';

/** One FILE_FORMAT entry: key upper-case. */
export interface FormatEntry {
  readonly key: string;
  readonly value: OptionValue;
}

export interface StageRecord {
  readonly id: string;
  readonly catalogId: string;
  readonly name: string;
  readonly location: string;
  readonly fileFormat: readonly FormatEntry[];
  readonly comment: string | null;
  readonly ownerId: string;
  readonly ownerName: string;
  readonly createdAt: Date;
}

/** A stage a caller may use, ready for file operations. */
export interface ResolvedStage {
  readonly kind: 'user' | 'named';
  /** `~` or the stage's name. */
  readonly name: string;
  readonly catalog: CatalogRecord;
  readonly fileFormat: readonly FormatEntry[];
  readonly files: StageFiles;
}

export interface StageServiceOptions {
  readonly store: MetaStore;
  readonly catalog: CatalogService;
  readonly clock: { now(): number };
}

interface StageRow {
  id: string; catalog_id: string; name: string; location: string; file_format: FormatEntry[] | string; comment: string | null;
  owner_id: string; owner_name: string | null; created_at: Date | string;
}

const STAGE_COLUMNS = `s.id, s.catalog_id, s.name, s.location, s.file_format, s.comment, s.owner_id, p.name AS owner_name, s.created_at`;

function toRecord(r: StageRow): StageRecord {
  return {
    id: r.id, catalogId: r.catalog_id, name: r.name, location: r.location,
    fileFormat: typeof r.file_format === 'string' ? JSON.parse(r.file_format) as FormatEntry[] : r.file_format,
    comment: r.comment, ownerId: r.owner_id, ownerName: r.owner_name ?? '', createdAt: new Date(r.created_at),
  };
}

/** `<warehouse>/stages/` with exactly one slash between. */
export function stagesRoot(catalog: CatalogRecord): string {
  return `${catalog.warehouseLocation.replace(/\/+$/, '')}/stages/`;
}

export class StageService {
  constructor(private readonly o: StageServiceOptions) {}

  private async catalogOf(cc: CatalogContext, catalog: string): Promise<CatalogRecord> {
    try {
      return await this.o.catalog.loadCatalog(cc, catalog);
    } catch (e) {
      throw sqlErrorOf(e, catalog);
    }
  }

  private async find(db: SqlExecutor, catalogId: string, name: string, lock = false): Promise<StageRecord | undefined> {
    const r = await db.query<StageRow>(`SELECT ${STAGE_COLUMNS} FROM stages s LEFT JOIN principals p ON p.id = s.owner_id WHERE s.catalog_id = $1 AND s.name = $2${lock ? ' FOR UPDATE OF s' : ''}`, [catalogId, name]);
    return r.rows[0] && toRecord(r.rows[0]);
  }

  /** Whether the caller may use (LIST, REMOVE, COPY, upload to) the named stage. */
  private async mayUse(cc: CatalogContext, stage: StageRecord): Promise<boolean> {
    if (isTenantAdmin(cc.roles) || stage.ownerId === cc.principalId) return true;
    const r = await this.o.store.query(
      `SELECT 1 FROM stage_grants WHERE stage_id = $1 AND ((grantee_kind = 'user' AND grantee = $2) OR (grantee_kind = 'role' AND lower(grantee) = ANY($3::text[]))) LIMIT 1`,
      [stage.id, cc.principalId, cc.roles.map((x) => x.toLowerCase())]);
    return r.rows.length > 0;
  }

  /** The stage `ref` names in `catalog`, when the caller may use it; NOT_FOUND or PERMISSION_DENIED otherwise. */
  async resolve(cc: CatalogContext, catalog: string, ref: StageRef): Promise<ResolvedStage> {
    const record = await this.catalogOf(cc, catalog);
    const io = await this.o.catalog.fileIOFor(cc, catalog);
    if (ref.kind === 'user') {
      return { kind: 'user', name: '~', catalog: record, fileFormat: [], files: new StageFiles(io, `${stagesRoot(record)}users/${cc.principalId}/`) };
    }
    const stage = await this.find(this.o.store, record.id, ref.name);
    if (stage === undefined || !(await this.mayUse(cc, stage))) {
      if (stage !== undefined) throw floeError('PERMISSION_DENIED', { detail: `USAGE on stage ${ref.name} is required` });
      throw floeError('NOT_FOUND', { what: `stage ${ref.name} in catalog ${catalog}` });
    }
    return { kind: 'named', name: stage.name, catalog: record, fileFormat: stage.fileFormat, files: new StageFiles(io, stage.location) };
  }

  async create(cc: CatalogContext, catalog: string, r: { name: string; ifNotExists: boolean; url: string | undefined; fileFormat: readonly FormatEntry[]; comment: string | undefined }): Promise<boolean> {
    const record = await this.catalogOf(cc, catalog);
    const id = randomUUID();
    const root = stagesRoot(record);
    const location = r.url === undefined ? `${root}${id}/` : stageUrl(root, r.url);
    return this.o.store.transaction(async (tx) => {
      if (await this.find(tx, record.id, r.name, true) !== undefined) {
        if (r.ifNotExists) return false;
        throw floeError('DUPLICATE_OBJECT', { kind: 'stage', name: r.name });
      }
      // Two stages over one folder would let USAGE on one reach the other's files.
      const overlap = await tx.query<{ name: string }>('SELECT name FROM stages WHERE catalog_id = $1 AND (starts_with(location, $2) OR starts_with($2, location))', [record.id, location]);
      if (overlap.rows.length > 0) throw floeError('INVALID_PARAMETER', { name: 'URL', detail: `overlaps the folder of another stage (${overlap.rows[0]!.name})` });
      await tx.query(
        'INSERT INTO stages (id, tenant_id, catalog_id, name, location, file_format, comment, owner_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        [id, cc.tenantId, record.id, r.name, location, JSON.stringify(r.fileFormat), r.comment ?? null, cc.principalId, new Date(this.o.clock.now())]);
      return true;
    });
  }

  /** Drops the stage and deletes its files (a stage's folder belongs to it alone). */
  async drop(cc: CatalogContext, catalog: string, name: string, ifExists: boolean): Promise<boolean> {
    const record = await this.catalogOf(cc, catalog);
    const dropped = await this.o.store.transaction(async (tx) => {
      const stage = await this.find(tx, record.id, name, true);
      if (stage === undefined) {
        if (ifExists) return undefined;
        throw floeError('NOT_FOUND', { what: `stage ${name} in catalog ${catalog}` });
      }
      requireOwner(cc, stage, 'DROP STAGE');
      await tx.query('DELETE FROM stages WHERE id = $1', [stage.id]);
      return stage;
    });
    if (dropped === undefined) return false;
    const io = await this.o.catalog.fileIOFor(cc, catalog);
    await io.deletePrefix(dropped.location).catch(() => undefined);
    return true;
  }

  /** The catalog's stages the caller may use (all of them for tenant_admin). */
  async list(cc: CatalogContext, catalog: string): Promise<StageRecord[]> {
    const record = await this.catalogOf(cc, catalog);
    const r = await this.o.store.query<StageRow>(`SELECT ${STAGE_COLUMNS} FROM stages s LEFT JOIN principals p ON p.id = s.owner_id WHERE s.catalog_id = $1 ORDER BY s.name`, [record.id]);
    const out: StageRecord[] = [];
    for (const row of r.rows) {
      const s = toRecord(row);
      if (await this.mayUse(cc, s)) out.push(s);
    }
    return out;
  }

  async grant(cc: CatalogContext, catalog: string, r: { stage: string; granteeKind: 'USER' | 'ROLE'; grantee: string; revoke: boolean }): Promise<string> {
    const record = await this.catalogOf(cc, catalog);
    return this.o.store.transaction(async (tx) => {
      const stage = await this.find(tx, record.id, r.stage, true);
      if (stage === undefined) throw floeError('NOT_FOUND', { what: `stage ${r.stage} in catalog ${catalog}` });
      requireOwner(cc, stage, r.revoke ? 'REVOKE USAGE ON STAGE' : 'GRANT USAGE ON STAGE');
      let grantee: string;
      let display: string;
      if (r.granteeKind === 'USER') {
        const p = await tx.query<{ id: string; name: string }>(`SELECT id, name FROM principals WHERE tenant_id = $1 AND lower(name) = lower($2) AND status <> 'EXPUNGED'`, [cc.tenantId, r.grantee]);
        if (p.rows.length === 0) throw floeError('NOT_FOUND', { what: `user ${r.grantee}` });
        grantee = p.rows[0]!.id;
        display = `user ${p.rows[0]!.name}`;
      } else {
        const q = await tx.query<{ name: string }>('SELECT name FROM tenant_roles WHERE tenant_id = $1 AND lower(name) = lower($2)', [cc.tenantId, r.grantee]);
        if (q.rows.length === 0) throw floeError('NOT_FOUND', { what: `role ${r.grantee}` });
        grantee = q.rows[0]!.name;
        display = `role ${grantee}`;
      }
      const kind = r.granteeKind === 'USER' ? 'user' : 'role';
      if (r.revoke) {
        await tx.query('DELETE FROM stage_grants WHERE stage_id = $1 AND grantee_kind = $2 AND grantee = $3', [stage.id, kind, grantee]);
        return `USAGE on stage ${stage.name} revoked from ${display}`;
      }
      await tx.query(
        'INSERT INTO stage_grants (tenant_id, stage_id, grantee_kind, grantee, granted_by, granted_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
        [cc.tenantId, stage.id, kind, grantee, cc.principalId, new Date(this.o.clock.now())]);
      return `USAGE on stage ${stage.name} granted to ${display}`;
    });
  }
}

function requireOwner(cc: CatalogContext, stage: StageRecord, what: string): void {
  if (!isTenantAdmin(cc.roles) && stage.ownerId !== cc.principalId) throw floeError('PERMISSION_DENIED', { detail: `${what} ${stage.name}: only its owner or tenant_admin` });
}

/**
 * The folder a URL = '…' names, which must lie under the catalog's `stages/` folder: a stage can
 * reach neither table data (REMOVE would delete it) nor another tenant's storage.
 */
export function stageUrl(root: string, url: string): string {
  const folder = url.endsWith('/') ? url : `${url}/`;
  if (!folder.startsWith(root) || folder.length === root.length) {
    throw floeError('INVALID_PARAMETER', { name: 'URL', detail: `a stage URL must name a folder under the catalog's stage area ${root}` });
  }
  const rest = folder.slice(root.length, -1);
  const top = rest.split('/')[0];
  if (top === 'users' || top === '_uploads') throw floeError('INVALID_PARAMETER', { name: 'URL', detail: `the ${top}/ folder is Floe's own (users' stages, multipart uploads)` });
  const segments = rest.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..' || /%(2f|5c|2e)|[\\\u0000-\u001f]/i.test(s))) {
    throw floeError('INVALID_PARAMETER', { name: 'URL', detail: 'the folder path contains an empty, . or .. segment, or an encoded separator' });
  }
  return folder;
}
