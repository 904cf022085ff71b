/**
 * The stage statements: CREATE STAGE, DROP STAGE, SHOW STAGES, LIST, REMOVE and GRANT/REVOKE USAGE
 * ON STAGE, in the session's catalog. Answers are row sets like every statement's.
 */
import { floeError } from '../../grammar/errors.js';
import { unreachable, type Statement } from '../../grammar/ir.js';
import { identName } from '../planner/names.js';
import { catalogContextOf } from '../session/catalog-statements.js';
import type { RowSet, StatementContext } from '../session/query-service.js';
import { parseStageRef, stageDisplay, stagePattern } from './stage-path.js';
import type { StageService } from './stages.js';

export type StageStatement = Extract<Statement, { kind: 'CreateStage' | 'DropStage' | 'ShowStages' | 'ListStage' | 'RemoveStage' | 'GrantStage' | 'RevokeStage' }>;

function message(text: string): RowSet {
  return { columns: ['status'], types: ['VARCHAR'], rows: [[text]] };
}

/** SQL LIKE as a regular expression (`%` any run, `_` one character), case-insensitive as SHOW … LIKE elsewhere. */
function likeMatcher(like: string | undefined): (name: string) => boolean {
  if (like === undefined) return () => true;
  const re = new RegExp(`^${[...like].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`, 'is');
  return (name) => re.test(name);
}

export class StageStatements {
  constructor(private readonly stages: StageService) {}

  async run(ctx: StatementContext, s: Statement): Promise<RowSet> {
    const cc = catalogContextOf(ctx);
    const catalog = ctx.session.catalog;
    if (!isStageStatement(s)) throw floeError('UNSUPPORTED_STATEMENT', { what: s.kind });
    switch (s.kind) {
      case 'CreateStage': {
        const name = identName(s.name);
        const created = await this.stages.create(cc, catalog, { name, ifNotExists: s.ifNotExists, url: s.url, fileFormat: s.fileFormat ?? [], comment: s.comment });
        return message(created ? `stage ${name} created` : `stage ${name} already exists`);
      }
      case 'DropStage': {
        const name = identName(s.name);
        const dropped = await this.stages.drop(cc, catalog, name, s.ifExists);
        return message(dropped ? `stage ${name} dropped` : `stage ${name} does not exist`);
      }
      case 'ShowStages': {
        const like = likeMatcher(s.like);
        const rows = (await this.stages.list(cc, catalog)).filter((x) => like(x.name)).map((x) => [
          x.name, catalog, x.location, x.fileFormat.map((e) => `${e.key} = ${typeof e.value === 'string' ? `'${e.value}'` : String(e.value)}`).join(', '),
          x.ownerName, x.comment, x.createdAt.toISOString(),
        ]);
        return { columns: ['name', 'catalog', 'url', 'file_format', 'owner', 'comment', 'created_at'], types: ['VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR'], rows };
      }
      case 'ListStage': {
        const ref = parseStageRef(s.path);
        const stage = await this.stages.resolve(cc, catalog, ref);
        const match = stagePattern(s.pattern);
        const files = (await stage.files.list(ref.path)).filter((f) => match === undefined || match(f.key));
        return {
          columns: ['name', 'size', 'last_modified'], types: ['VARCHAR', 'BIGINT', 'VARCHAR'],
          rows: files.map((f) => [stageDisplay(stage, f.key).slice(1), f.size, new Date(f.lastModifiedMs).toISOString()]),
        };
      }
      case 'RemoveStage': {
        const ref = parseStageRef(s.path);
        const stage = await this.stages.resolve(cc, catalog, ref);
        const match = stagePattern(s.pattern);
        const files = (await stage.files.list(ref.path)).filter((f) => match === undefined || match(f.key));
        for (const f of files) await stage.files.remove(f.key);
        return { columns: ['name', 'result'], types: ['VARCHAR', 'VARCHAR'], rows: files.map((f) => [stageDisplay(stage, f.key).slice(1), 'removed']) };
      }
      case 'GrantStage':
      case 'RevokeStage':
        return message(await this.stages.grant(cc, catalog, { stage: identName(s.stage), granteeKind: s.granteeKind, grantee: identName(s.grantee), revoke: s.kind === 'RevokeStage' }));
      default:
        return unreachable(s);
    }
  }
}

function isStageStatement(s: Statement): s is StageStatement {
  return s.kind === 'CreateStage' || s.kind === 'DropStage' || s.kind === 'ShowStages' || s.kind === 'ListStage' || s.kind === 'RemoveStage' || s.kind === 'GrantStage' || s.kind === 'RevokeStage';
}
