/**
 * IR → SQL text.
 *
 * - `unparseQuery(relation, options)`: DuckDB SQL for a query (or the query part of a DML
 *   statement). `options.table` is the engine's hook: it receives every table reference (Scan or
 *   TableFunction) and may return the SQL of the relation to read instead (`read_parquet([...])`,
 *   `(SELECT … )`); the reference's alias, or its table name when it had none, is appended as
 *   `AS <alias>` so column references keep resolving.
 * - `toSql(statement, options)`: any statement. Queries and DML in DuckDB syntax; DDL, principal,
 *   workload and session statements in Floe syntax (what our grammar parses), so that
 *   `parse(toSql(parse(s)))` equals `parse(s)` (spans aside) for every statement.
 *
 * Identifiers are printed bare when they were bare (our grammar reserves every word DuckDB
 * reserves, so a bare identifier is valid in both), otherwise double-quoted with "" doubling.
 * String literals are single-quoted with '' doubling.
 */
import type {
  Expr, Relation, Statement, Ident, QualifiedName, DataType, OrderItem, WindowSpec, FrameBound, TableAlias,
  GroupingElement, SelectItem, TableRef, OptionEntry, OptionValue, UserOptions, ColumnDef, PartitionField,
  Assignment, MergeClause, CopySource, AlterTableAction, CteDef, BinaryOp, TimeTravel, RefusedConstraint, CreateTable,
} from './ir.js';
import { unreachable } from './ir.js';
import { RESERVED_WORDS } from './keywords.js';

export interface UnparseOptions {
  /** Replaces a table reference by the engine's own relation SQL; undefined keeps the name. */
  readonly table?: (ref: TableRef) => string | undefined;
}

/** A double-quoted identifier (always quoted). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** An identifier as it was written: bare, or quoted. */
export function identSql(id: Ident): string {
  return id.quoted ? quoteIdent(id.name) : id.name;
}

/** A word printed bare when that is safe, quoted otherwise (for names that lost their quoting). */
function wordSql(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_$]*$/.test(name) && !RESERVED_WORDS.has(name.toLowerCase()) ? name : quoteIdent(name);
}

export function stringSql(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

function nameSql(n: QualifiedName): string {
  return n.parts.map(identSql).join('.');
}

function optionValueSql(v: OptionValue): string {
  return typeof v === 'string' ? stringSql(v) : typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : String(v);
}

// ------------------------------------------------------------------ expressions

const P_OR = 1, P_AND = 2, P_NOT = 3, P_IS = 4, P_CMP = 5, P_LIKE = 6, P_CONCAT = 7, P_ADD = 8, P_MUL = 9, P_UNARY = 10, P_ATOM = 11;

function binaryPrec(op: BinaryOp): number {
  switch (op) {
    case 'OR': return P_OR;
    case 'AND': return P_AND;
    case 'IS DISTINCT FROM': case 'IS NOT DISTINCT FROM': return P_IS;
    case '=': case '<>': case '<': case '<=': case '>': case '>=': return P_CMP;
    case '||': return P_CONCAT;
    case '+': case '-': return P_ADD;
    case '*': case '/': case '%': return P_MUL;
    default: return unreachable(op);
  }
}

function exprPrec(e: Expr): number {
  switch (e.kind) {
    case 'Binary': return binaryPrec(e.op);
    case 'Unary': return e.op === 'NOT' ? P_NOT : P_UNARY;
    case 'Is': return P_IS;
    case 'Quantified': return P_CMP;
    case 'Like': case 'Between': case 'InList': case 'InSubquery': return P_LIKE;
    default: return P_ATOM;
  }
}

class Printer {
  constructor(private readonly options: UnparseOptions) {}

  /** `e` printed so that it parses back at precedence `min` or tighter. */
  p(e: Expr, min: number): string {
    const s = this.expr(e);
    return exprPrec(e) < min ? `(${s})` : s;
  }

  exprs(es: readonly Expr[]): string {
    return es.map((e) => this.expr(e)).join(', ');
  }

  expr(e: Expr): string {
    switch (e.kind) {
      case 'NumberLiteral': return e.text;
      case 'StringLiteral': return stringSql(e.value);
      case 'BooleanLiteral': return e.value ? 'TRUE' : 'FALSE';
      case 'NullLiteral': return 'NULL';
      case 'TypedLiteral': return `${e.type.toUpperCase()} ${stringSql(e.value)}`;
      case 'IntervalLiteral': {
        const v = e.value.kind === 'StringLiteral' || e.value.kind === 'NumberLiteral' ? this.expr(e.value) : `(${this.expr(e.value)})`;
        return `INTERVAL ${v}${e.unit === undefined ? '' : ` ${e.unit.toUpperCase()}`}`;
      }
      case 'ColumnRef': return e.parts.map(identSql).join('.');
      case 'Unary': {
        if (e.op === 'NOT') return `NOT ${this.p(e.operand, P_NOT + 1)}`;
        const inner = this.p(e.operand, P_UNARY);
        return `${e.op}${inner.startsWith('-') || inner.startsWith('+') ? ' ' : ''}${inner}`;
      }
      case 'Binary': {
        const prec = binaryPrec(e.op);
        // Comparisons do not associate in DuckDB (`a = b = c` is an error): parenthesize both sides.
        const leftMin = prec === P_CMP || prec === P_IS ? prec + 1 : prec;
        return `${this.p(e.left, leftMin)} ${e.op} ${this.p(e.right, prec + 1)}`;
      }
      case 'Like': {
        const op = `${e.not ? 'NOT ' : ''}${e.caseInsensitive ? 'ILIKE' : 'LIKE'}`;
        return `${this.p(e.expr, P_LIKE + 1)} ${op} ${this.p(e.pattern, P_LIKE + 1)}${e.escape === undefined ? '' : ` ESCAPE ${this.p(e.escape, P_LIKE + 1)}`}`;
      }
      case 'Is': return `${this.p(e.expr, P_IS + 1)} IS ${e.not ? 'NOT ' : ''}${e.value}`;
      case 'Between':
        return `${this.p(e.expr, P_LIKE + 1)} ${e.not ? 'NOT ' : ''}BETWEEN ${e.symmetric ? 'SYMMETRIC ' : ''}${this.p(e.low, P_CONCAT)} AND ${this.p(e.high, P_CONCAT)}`;
      case 'InList': return `${this.p(e.expr, P_LIKE + 1)} ${e.not ? 'NOT ' : ''}IN (${this.exprs(e.list)})`;
      case 'InSubquery': return `${this.p(e.expr, P_LIKE + 1)} ${e.not ? 'NOT ' : ''}IN (${this.query(e.query)})`;
      case 'Quantified': return `${this.p(e.left, P_CMP + 1)} ${e.op} ${e.quantifier} (${this.query(e.query)})`;
      case 'Exists': return `EXISTS (${this.query(e.query)})`;
      case 'ScalarSubquery': return `(${this.query(e.query)})`;
      case 'Case': {
        const parts = ['CASE'];
        if (e.operand !== undefined) parts.push(this.expr(e.operand));
        for (const w of e.whens) parts.push(`WHEN ${this.expr(w.when)} THEN ${this.expr(w.then)}`);
        if (e.else !== undefined) parts.push(`ELSE ${this.expr(e.else)}`);
        parts.push('END');
        return parts.join(' ');
      }
      case 'Cast': return `${e.try ? 'TRY_CAST' : 'CAST'}(${this.expr(e.expr)} AS ${typeSql(e.type)})`;
      case 'Extract': return `extract(${wordSql(e.field)} FROM ${this.expr(e.expr)})`;
      case 'FunctionCall': {
        let args: string;
        if (e.star) args = '*';
        else args = `${e.distinct ? 'DISTINCT ' : ''}${this.exprs(e.args)}${e.orderBy.length > 0 ? ` ORDER BY ${this.orderItems(e.orderBy)}` : ''}`;
        let s = `${nameSql(e.name)}(${args})`;
        if (e.filter !== undefined) s += ` FILTER (WHERE ${this.expr(e.filter)})`;
        if (e.over !== undefined) s += ` OVER ${this.overSql(e.over)}`;
        return s;
      }
      case 'Subscript': {
        // DuckDB takes a subscript on names, calls, lists, structs, strings and casts; anything
        // else (`1[1]`, `NULL[1]`) only in parentheses.
        const k = e.expr.kind;
        const bare = k === 'ColumnRef' || k === 'FunctionCall' || k === 'Subscript' || k === 'ListLiteral' || k === 'StructLiteral'
          || k === 'StringLiteral' || k === 'Cast' || k === 'ScalarSubquery';
        return `${bare ? this.expr(e.expr) : `(${this.expr(e.expr)})`}[${this.expr(e.index)}]`;
      }
      case 'ListLiteral': return `[${this.exprs(e.items)}]`;
      case 'StructLiteral': return `{${e.entries.map((x) => `${stringSql(x.key)}: ${this.expr(x.value)}`).join(', ')}}`;
      case 'Row': return `(${this.exprs(e.items)})`;
      default: return unreachable(e);
    }
  }

  orderItems(items: readonly OrderItem[]): string {
    return items
      .map((o) => `${this.expr(o.expr)}${o.direction === undefined ? '' : ` ${o.direction}`}${o.nulls === undefined ? '' : ` NULLS ${o.nulls}`}`)
      .join(', ');
  }

  overSql(w: WindowSpec): string {
    if (w.base !== undefined && w.partitionBy.length === 0 && w.orderBy.length === 0 && w.frame === undefined) return identSql(w.base);
    return `(${this.windowSpec(w)})`;
  }

  windowSpec(w: WindowSpec): string {
    const parts: string[] = [];
    if (w.base !== undefined) parts.push(identSql(w.base));
    if (w.partitionBy.length > 0) parts.push(`PARTITION BY ${this.exprs(w.partitionBy)}`);
    if (w.orderBy.length > 0) parts.push(`ORDER BY ${this.orderItems(w.orderBy)}`);
    if (w.frame !== undefined) {
      const f = w.frame;
      const bounds = f.end === undefined ? this.bound(f.start) : `BETWEEN ${this.bound(f.start)} AND ${this.bound(f.end)}`;
      parts.push(`${f.units} ${bounds}${f.exclude === undefined ? '' : ` EXCLUDE ${f.exclude}`}`);
    }
    return parts.join(' ');
  }

  bound(b: FrameBound): string {
    switch (b.kind) {
      case 'UnboundedPreceding': return 'UNBOUNDED PRECEDING';
      case 'UnboundedFollowing': return 'UNBOUNDED FOLLOWING';
      case 'CurrentRow': return 'CURRENT ROW';
      case 'Preceding': return `${this.expr(b.offset)} PRECEDING`;
      case 'Following': return `${this.expr(b.offset)} FOLLOWING`;
      default: return unreachable(b);
    }
  }

  // ---------------------------------------------------------------- relations

  /** A whole query: WITH, set operations or a SELECT block, ORDER BY, LIMIT. */
  query(rel: Relation): string {
    if (rel.kind === 'With') {
      const ctes = rel.ctes.map((c) => this.cte(c)).join(', ');
      const body = rel.body.kind === 'With' ? `(${this.query(rel.body)})` : this.query(rel.body);
      return `WITH ${rel.recursive ? 'RECURSIVE ' : ''}${ctes} ${body}`;
    }
    let core: Relation = rel;
    let limit: Extract<Relation, { kind: 'Limit' }> | undefined;
    let sort: Extract<Relation, { kind: 'Sort' }> | undefined;
    if (core.kind === 'Limit') {
      limit = core;
      core = core.input;
    }
    if (core.kind === 'Sort') {
      sort = core;
      core = core.input;
    }
    let s = this.queryCore(core, sort !== undefined || limit !== undefined);
    if (sort !== undefined) s += ` ORDER BY ${this.orderItems(sort.keys)}`;
    if (limit !== undefined) {
      if (limit.count !== undefined) s += ` LIMIT ${this.expr(limit.count)}`;
      if (limit.offset !== undefined) s += ` OFFSET ${this.expr(limit.offset)}`;
    }
    return s;
  }

  cte(c: CteDef): string {
    const cols = c.columns.length > 0 ? `(${c.columns.map(identSql).join(', ')})` : '';
    const mat = c.materialized === undefined ? '' : c.materialized ? 'MATERIALIZED ' : 'NOT MATERIALIZED ';
    return `${identSql(c.name)}${cols} AS ${mat}(${this.query(c.query)})`;
  }

  /** Set operations, VALUES or one SELECT block; `modified` when ORDER BY/LIMIT follow. */
  queryCore(rel: Relation, modified: boolean): string {
    switch (rel.kind) {
      case 'SetOp': return this.setOp(rel);
      case 'Values': return `VALUES ${rel.rows.map((r) => `(${this.exprs(r)})`).join(', ')}`;
      case 'With': case 'Limit': case 'Sort': return `(${this.query(rel)})`;
      case 'Distinct': case 'Project': case 'Filter': case 'Aggregate': case 'Window':
        return this.block(rel);
      case 'Scan': case 'TableFunction': case 'CteRef': case 'Derived': case 'Join': case 'OneRow':
        return `SELECT * FROM ${this.from(rel)}`;
      default:
        void modified;
        return unreachable(rel);
    }
  }

  setOp(rel: Extract<Relation, { kind: 'SetOp' }>): string {
    const level = rel.op === 'INTERSECT' ? 2 : 1;
    const side = (r: Relation, right: boolean): string => {
      if (r.kind === 'SetOp') {
        const l = r.op === 'INTERSECT' ? 2 : 1;
        return l < level || (right && l <= level) ? `(${this.query(r)})` : this.setOp(r);
      }
      if (r.kind === 'With' || r.kind === 'Sort' || r.kind === 'Limit') return `(${this.query(r)})`;
      return this.queryCore(r, false);
    };
    return `${side(rel.left, false)} ${rel.op}${rel.all ? ' ALL' : ''} ${side(rel.right, true)}`;
  }

  /** One SELECT block, peeling the canonical operator stack (see ir.ts). */
  block(top: Relation): string {
    let r = top;
    let distinct: Extract<Relation, { kind: 'Distinct' }> | undefined;
    if (r.kind === 'Distinct') {
      distinct = r;
      r = r.input;
    }
    if (r.kind !== 'Project') return `SELECT ${distinct !== undefined ? this.distinct(distinct) : ''}* FROM (${this.query(r)}) AS _sub`;
    const items = r.items;
    r = r.input;
    let qualify: Expr | undefined;
    let having: Expr | undefined;
    let where: Expr | undefined;
    let windows: Extract<Relation, { kind: 'Window' }> | undefined;
    let aggregate: Extract<Relation, { kind: 'Aggregate' }> | undefined;
    if (r.kind === 'Filter' && r.clause === 'QUALIFY') {
      qualify = r.predicate;
      r = r.input;
    }
    if (r.kind === 'Window') {
      windows = r;
      r = r.input;
    }
    if (r.kind === 'Filter' && r.clause === 'HAVING') {
      having = r.predicate;
      r = r.input;
    }
    if (r.kind === 'Aggregate') {
      aggregate = r;
      r = r.input;
    }
    if (r.kind === 'Filter' && r.clause === 'WHERE') {
      where = r.predicate;
      r = r.input;
    }
    let s = `SELECT ${distinct !== undefined ? this.distinct(distinct) : ''}${items.map((i) => this.selectItem(i)).join(', ')}`;
    if (r.kind !== 'OneRow') s += ` FROM ${this.from(r)}`;
    if (where !== undefined) s += ` WHERE ${this.expr(where)}`;
    if (aggregate !== undefined && aggregate.groupBy.length > 0) s += ` GROUP BY ${aggregate.groupBy.map((g) => this.grouping(g)).join(', ')}`;
    if (having !== undefined) s += ` HAVING ${this.expr(having)}`;
    if (windows !== undefined && windows.windows.length > 0) {
      s += ` WINDOW ${windows.windows.map((w) => `${identSql(w.name)} AS (${this.windowSpec(w.spec)})`).join(', ')}`;
    }
    if (qualify !== undefined) s += ` QUALIFY ${this.expr(qualify)}`;
    return s;
  }

  distinct(d: Extract<Relation, { kind: 'Distinct' }>): string {
    return d.on === undefined ? 'DISTINCT ' : `DISTINCT ON (${this.exprs(d.on)}) `;
  }

  selectItem(i: SelectItem): string {
    if (i.kind === 'Star') {
      const q = i.qualifier.map((x) => `${identSql(x)}.`).join('');
      return `${q}*${i.exclude.length > 0 ? ` EXCLUDE (${i.exclude.map(identSql).join(', ')})` : ''}`;
    }
    return `${this.expr(i.expr)}${i.alias === undefined ? '' : ` AS ${identSql(i.alias)}`}`;
  }

  grouping(g: GroupingElement): string {
    switch (g.kind) {
      case 'Rollup': return `ROLLUP (${this.exprs(g.exprs)})`;
      case 'Cube': return `CUBE (${this.exprs(g.exprs)})`;
      case 'GroupingSets': return `GROUPING SETS (${g.sets.map((s) => `(${this.exprs(s)})`).join(', ')})`;
      case 'EmptyGroupingSet': return '()';
      default: return this.expr(g);
    }
  }

  alias(a: TableAlias | undefined): string {
    if (a === undefined) return '';
    return ` AS ${identSql(a.name)}${a.columns.length > 0 ? `(${a.columns.map(identSql).join(', ')})` : ''}`;
  }

  timeTravel(t: TimeTravel | undefined): string {
    if (t === undefined) return '';
    return t.kind === 'AsOfVersion' ? ` FOR VERSION AS OF ${this.expr(t.version)}` : ` FOR TIMESTAMP AS OF ${this.expr(t.timestamp)}`;
  }

  /** A FROM item. */
  from(r: Relation): string {
    switch (r.kind) {
      case 'Scan': {
        const replaced = this.options.table?.(r);
        if (replaced !== undefined) return `${replaced}${r.alias !== undefined ? this.alias(r.alias) : ` AS ${identSql(r.table.parts[r.table.parts.length - 1]!)}`}`;
        return `${nameSql(r.table)}${this.timeTravel(r.timeTravel)}${this.alias(r.alias)}`;
      }
      case 'TableFunction': {
        const replaced = this.options.table?.(r);
        if (replaced !== undefined) return `${replaced}${r.alias !== undefined ? this.alias(r.alias) : ` AS ${identSql(r.name.parts[r.name.parts.length - 1]!)}`}`;
        return `${nameSql(r.name)}(${this.exprs(r.args)})${this.alias(r.alias)}`;
      }
      case 'CteRef': return `${identSql(r.name)}${this.alias(r.alias)}`;
      case 'Derived': return `${r.lateral ? 'LATERAL ' : ''}(${this.query(r.query)})${this.alias(r.alias)}`;
      case 'Join': {
        const right = r.right.kind === 'Join' ? `(${this.from(r.right)})` : this.from(r.right);
        if (r.implicit) return `${this.from(r.left)}, ${right}`;
        const type = r.joinType === 'INNER' ? 'JOIN' : `${r.joinType} JOIN`;
        let s = `${this.from(r.left)} ${r.natural ? 'NATURAL ' : ''}${type} ${right}`;
        if (r.condition !== undefined) {
          s += r.condition.kind === 'On' ? ` ON ${this.expr(r.condition.expr)}` : ` USING (${r.condition.columns.map(identSql).join(', ')})`;
        }
        return s;
      }
      case 'OneRow': return '(SELECT 1) AS _one';
      default: return `(${this.query(r)}) AS _sub`;
    }
  }
}

// ------------------------------------------------------------------ types

const PRIMITIVE_SQL: Readonly<Record<string, string>> = {
  boolean: 'BOOLEAN', tinyint: 'TINYINT', smallint: 'SMALLINT', int: 'INTEGER', bigint: 'BIGINT', hugeint: 'HUGEINT',
  float: 'FLOAT', double: 'DOUBLE', date: 'DATE', time: 'TIME', timestamp: 'TIMESTAMP', timestamptz: 'TIMESTAMPTZ',
  string: 'VARCHAR', uuid: 'UUID', binary: 'BLOB', json: 'JSON',
};

/**
 * A data type in DuckDB spelling; Iceberg-only forms (fixed(n), struct fields with NOT NULL or
 * COMMENT) in Floe spelling.
 */
export function typeSql(t: DataType): string {
  switch (t.kind) {
    case 'PrimitiveType': return PRIMITIVE_SQL[t.name]!;
    case 'DecimalType': return t.precision === undefined ? 'DECIMAL' : `DECIMAL(${t.precision}, ${t.scale ?? 0})`;
    case 'FixedType': return `FIXED(${t.length})`;
    case 'ListType': return `${typeSql(t.element)}[]`;
    case 'MapType': return `MAP(${typeSql(t.key)}, ${typeSql(t.value)})`;
    case 'StructType':
      if (t.fields.some((f) => f.notNull || f.comment !== undefined)) {
        return `STRUCT<${t.fields.map((f) => `${identSql(f.name)}: ${typeSql(f.type)}${f.notNull ? ' NOT NULL' : ''}${f.comment === undefined ? '' : ` COMMENT ${stringSql(f.comment)}`}`).join(', ')}>`;
      }
      return `STRUCT(${t.fields.map((f) => `${identSql(f.name)} ${typeSql(f.type)}`).join(', ')})`;
    default: return unreachable(t);
  }
}

// ------------------------------------------------------------------ statements

/** DuckDB SQL of a query relation, with table references replaced through `options.table`. */
export function unparseQuery(rel: Relation, options: UnparseOptions = {}): string {
  return new Printer(options).query(rel);
}

/**
 * DuckDB SQL of a relation in FROM position (`a AS x, b JOIN c ON …`), aliases kept: for the FROM
 * list of UPDATE … FROM and the USING list of DELETE … USING, whose names the statement's other
 * clauses refer to.
 */
export function unparseFrom(rel: Relation, options: UnparseOptions = {}): string {
  return new Printer(options).from(rel);
}

/** DuckDB SQL of an expression. */
export function unparseExpr(e: Expr, options: UnparseOptions = {}): string {
  return new Printer(options).expr(e);
}

function ifNotExists(b: boolean): string {
  return b ? 'IF NOT EXISTS ' : '';
}
function ifExists(b: boolean): string {
  return b ? 'IF EXISTS ' : '';
}
function props(entries: readonly OptionEntry[]): string {
  return entries.map((e) => `${stringSql(e.key)} = ${optionValueSql(e.value)}`).join(', ');
}
/** A column's type and constraints (CREATE TABLE and ADD COLUMN); refused constraints print as written. */
function columnBodySql(c: { type: DataType; notNull: boolean; primaryKey: boolean; comment: string | undefined; refused: readonly RefusedConstraint[] }): string {
  return `${typeSql(c.type)}${c.notNull ? ' NOT NULL' : ''}${c.primaryKey ? ' PRIMARY KEY' : ''}${c.refused.map((r) => ` ${r.sql}`).join('')}${c.comment === undefined ? '' : ` COMMENT ${stringSql(c.comment)}`}`;
}
function columnDefSql(c: ColumnDef): string {
  return `${identSql(c.name)} ${columnBodySql(c)}`;
}
function tableElementsSql(s: CreateTable): string {
  const pk = s.primaryKey === undefined ? [] : [`PRIMARY KEY (${s.primaryKey.map(identSql).join(', ')})`];
  return [...s.columns.map(columnDefSql), ...pk, ...s.refused.map((r) => r.sql)].join(', ');
}
function partitionSql(p: PartitionField): string {
  if (p.transform === 'identity') return identSql(p.column);
  if (p.parameter !== undefined) return `${p.transform}(${p.parameter}, ${identSql(p.column)})`;
  return `${p.transform}(${identSql(p.column)})`;
}
function tableOptionsSql(o: { partitionBy: readonly PartitionField[]; properties: readonly OptionEntry[]; comment: string | undefined; location: string | undefined; using: string | undefined }): string {
  let s = '';
  if (o.using !== undefined) s += ` USING ${wordSql(o.using)}`;
  if (o.partitionBy.length > 0) s += ` PARTITIONED BY (${o.partitionBy.map(partitionSql).join(', ')})`;
  if (o.comment !== undefined) s += ` COMMENT ${stringSql(o.comment)}`;
  if (o.location !== undefined) s += ` LOCATION ${stringSql(o.location)}`;
  if (o.properties.length > 0) s += ` WITH (${props(o.properties)})`;
  return s;
}
const USER_OPTION_KEYS: readonly [keyof UserOptions, string][] = [
  ['email', 'EMAIL'], ['password', 'PASSWORD'], ['displayName', 'DISPLAY_NAME'], ['defaultRole', 'DEFAULT_ROLE'],
  ['defaultWarehouse', 'DEFAULT_WAREHOUSE'], ['mustChangePassword', 'MUST_CHANGE_PASSWORD'], ['comment', 'COMMENT'],
  ['identitySource', 'IDENTITY_SOURCE'],
];
function userOptionsSql(o: UserOptions): string {
  const parts: string[] = [];
  for (const [key, kw] of USER_OPTION_KEYS) {
    const v = o[key];
    if (v === undefined) continue;
    parts.push(`${kw} = ${typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : stringSql(v)}`);
  }
  return parts.join(' ');
}
function assignmentsSql(p: Printer, list: readonly Assignment[]): string {
  return list.map((a) => `${a.column.map(identSql).join('.')} = ${a.value === undefined ? 'DEFAULT' : p.expr(a.value)}`).join(', ');
}
function copySourceSql(p: Printer, src: CopySource): string {
  switch (src.kind) {
    case 'Stage': return `@${src.path}`;
    case 'Location': return stringSql(src.url);
    case 'StageQuery': {
      const items = src.items.map((i) => `${p.expr(i.expr)}${i.alias === undefined ? '' : ` AS ${identSql(i.alias)}`}`).join(', ');
      const params = [
        ...(src.fileFormat === undefined ? [] : [`FILE_FORMAT => (${src.fileFormat.map((e) => `${wordSql(e.key)} = ${optionValueSql(e.value)}`).join(', ')})`]),
        ...(src.namedFormat === undefined ? [] : [`FILE_FORMAT => ${stringSql(src.namedFormat)}`]),
        ...(src.pattern === undefined ? [] : [`PATTERN => ${stringSql(src.pattern)}`]),
      ];
      return `(SELECT ${items} FROM @${src.path}${params.length > 0 ? ` (${params.join(', ')})` : ''}${src.alias === undefined ? '' : ` ${identSql(src.alias)}`})`;
    }
    default: return unreachable(src);
  }
}

function mergeClauseSql(p: Printer, c: MergeClause): string {
  const head = `WHEN ${c.matched ? 'MATCHED' : 'NOT MATCHED'}${c.condition === undefined ? '' : ` AND ${p.expr(c.condition)}`} THEN `;
  const a = c.action;
  switch (a.kind) {
    case 'MergeUpdate': return `${head}UPDATE SET ${assignmentsSql(p, a.assignments)}`;
    case 'MergeDelete': return `${head}DELETE`;
    case 'MergeDoNothing': return `${head}DO NOTHING`;
    case 'MergeInsert': {
      const cols = a.columns.length > 0 ? ` (${a.columns.map(identSql).join(', ')})` : '';
      return `${head}INSERT${cols} VALUES (${a.values.map((v) => (v === undefined ? 'DEFAULT' : p.expr(v))).join(', ')})`;
    }
    default: return unreachable(a);
  }
}
function alterActionSql(a: AlterTableAction): string {
  const path = (ids: readonly Ident[]): string => ids.map(identSql).join('.');
  switch (a.kind) {
    case 'AddColumn': return `ADD COLUMN ${ifNotExists(a.ifNotExists)}${path(a.path)} ${columnBodySql(a)}`;
    case 'DropColumn': return `DROP COLUMN ${ifExists(a.ifExists)}${path(a.path)}`;
    case 'RenameColumn': return `RENAME COLUMN ${path(a.path)} TO ${identSql(a.newName)}`;
    case 'AlterColumnType': return `ALTER COLUMN ${path(a.path)} TYPE ${typeSql(a.type)}`;
    case 'DropNotNull': return `ALTER COLUMN ${path(a.path)} DROP NOT NULL`;
    case 'RenameTable': return `RENAME TO ${nameSql(a.newName)}`;
    case 'SetProperties': return `SET TBLPROPERTIES (${props(a.properties)})`;
    case 'UnsetProperties': return `UNSET TBLPROPERTIES ${ifExists(a.ifExists)}(${a.keys.map(stringSql).join(', ')})`;
    default: return unreachable(a);
  }
}
function inLike(inName: QualifiedName | undefined, like: string | undefined): string {
  return `${inName === undefined ? '' : ` IN ${nameSql(inName)}`}${like === undefined ? '' : ` LIKE ${stringSql(like)}`}`;
}
function settingName(name: string): string {
  return name.split('.').map(wordSql).join('.');
}

/** SQL text of any statement (see the module comment for which dialect). */
export function toSql(s: Statement, options: UnparseOptions = {}): string {
  const p = new Printer(options);
  switch (s.kind) {
    case 'Query': return p.query(s.body);
    case 'Explain': return `EXPLAIN ${s.analyze ? 'ANALYZE ' : ''}${toSql(s.statement, options)}`;
    case 'Insert': {
      const cols = s.columns.length > 0 ? ` (${s.columns.map(identSql).join(', ')})` : '';
      return `INSERT INTO ${nameSql(s.table)}${cols} ${s.source === undefined ? 'DEFAULT VALUES' : p.query(s.source)}`;
    }
    case 'Update':
      return `UPDATE ${nameSql(s.table)}${s.alias === undefined ? '' : ` AS ${identSql(s.alias)}`} SET ${assignmentsSql(p, s.assignments)}${s.from === undefined ? '' : ` FROM ${p.from(s.from)}`}${s.where === undefined ? '' : ` WHERE ${p.expr(s.where)}`}`;
    case 'Delete':
      return `DELETE FROM ${nameSql(s.table)}${s.alias === undefined ? '' : ` AS ${identSql(s.alias)}`}${s.using === undefined ? '' : ` USING ${p.from(s.using)}`}${s.where === undefined ? '' : ` WHERE ${p.expr(s.where)}`}`;
    case 'Merge':
      return `MERGE INTO ${nameSql(s.target)}${s.alias === undefined ? '' : ` AS ${identSql(s.alias)}`} USING ${p.from(s.source)} ON ${p.expr(s.on)} ${s.clauses.map((c) => mergeClauseSql(p, c)).join(' ')}`;
    case 'CopyInto': {
      const cols = s.columns.length > 0 ? ` (${s.columns.map(identSql).join(', ')})` : '';
      const src = copySourceSql(p, s.source);
      const ff = s.fileFormat === undefined ? '' : ` FILE_FORMAT = (${s.fileFormat.map((e) => `${wordSql(e.key)} = ${optionValueSql(e.value)}`).join(', ')})`;
      const files = s.files === undefined ? '' : ` FILES = (${s.files.map(stringSql).join(', ')})`;
      const opts = [
        s.onError === undefined ? '' : ` ON_ERROR = ${s.onError}`,
        s.purge ? ' PURGE = TRUE' : '',
        s.force ? ' FORCE = TRUE' : '',
        s.validationMode === undefined ? '' : ` VALIDATION_MODE = ${s.validationMode}`,
        s.matchByColumnName === undefined ? '' : ` MATCH_BY_COLUMN_NAME = ${s.matchByColumnName}`,
      ].join('');
      return `COPY INTO ${nameSql(s.table)}${cols} FROM ${src}${ff}${s.pattern === undefined ? '' : ` PATTERN = ${stringSql(s.pattern)}`}${files}${opts}`;
    }
    case 'CreateStage': {
      const ff = s.fileFormat === undefined ? '' : ` FILE_FORMAT = (${s.fileFormat.map((e) => `${wordSql(e.key)} = ${optionValueSql(e.value)}`).join(', ')})`;
      return `CREATE STAGE ${ifNotExists(s.ifNotExists)}${identSql(s.name)}${s.url === undefined ? '' : ` URL = ${stringSql(s.url)}`}${ff}${s.comment === undefined ? '' : ` COMMENT = ${stringSql(s.comment)}`}`;
    }
    case 'DropStage': return `DROP STAGE ${ifExists(s.ifExists)}${identSql(s.name)}`;
    case 'ShowStages': return `SHOW STAGES${s.like === undefined ? '' : ` LIKE ${stringSql(s.like)}`}`;
    case 'ListStage': return `LIST @${s.path}${s.pattern === undefined ? '' : ` PATTERN = ${stringSql(s.pattern)}`}`;
    case 'RemoveStage': return `REMOVE @${s.path}${s.pattern === undefined ? '' : ` PATTERN = ${stringSql(s.pattern)}`}`;
    case 'GrantStage': return `GRANT USAGE ON STAGE ${identSql(s.stage)} TO ${s.granteeKind} ${identSql(s.grantee)}`;
    case 'RevokeStage': return `REVOKE USAGE ON STAGE ${identSql(s.stage)} FROM ${s.granteeKind} ${identSql(s.grantee)}`;
    case 'CreateSchema': return `CREATE SCHEMA ${ifNotExists(s.ifNotExists)}${nameSql(s.name)}${s.properties.length > 0 ? ` WITH (${props(s.properties)})` : ''}`;
    case 'DropSchema': return `DROP SCHEMA ${ifExists(s.ifExists)}${nameSql(s.name)}${s.cascade ? ' CASCADE' : ''}`;
    case 'CreateTable':
      return `CREATE ${s.orReplace ? 'OR REPLACE ' : ''}TABLE ${ifNotExists(s.ifNotExists)}${nameSql(s.name)} (${tableElementsSql(s)})${tableOptionsSql(s)}`;
    case 'CreateTableAs': {
      const cols = s.columnNames.length > 0 ? ` (${s.columnNames.map(identSql).join(', ')})` : '';
      return `CREATE ${s.orReplace ? 'OR REPLACE ' : ''}TABLE ${ifNotExists(s.ifNotExists)}${nameSql(s.name)}${cols}${tableOptionsSql(s)} AS ${p.query(s.query)}`;
    }
    case 'DropTable': return `DROP TABLE ${ifExists(s.ifExists)}${nameSql(s.name)}${s.purge ? ' PURGE' : ''}`;
    case 'AlterTable': return `ALTER TABLE ${ifExists(s.ifExists)}${nameSql(s.name)} ${alterActionSql(s.action)}`;
    case 'CreateView': {
      const cols = s.columnNames.length > 0 ? ` (${s.columnNames.map(identSql).join(', ')})` : '';
      return `CREATE ${s.orReplace ? 'OR REPLACE ' : ''}VIEW ${ifNotExists(s.ifNotExists)}${nameSql(s.name)}${cols}${s.comment === undefined ? '' : ` COMMENT ${stringSql(s.comment)}`} AS ${p.query(s.query)}`;
    }
    case 'DropView': return `DROP VIEW ${ifExists(s.ifExists)}${nameSql(s.name)}`;
    case 'CreateIndex':
      return `CREATE ${s.unique ? 'UNIQUE ' : ''}INDEX ${s.concurrently ? 'CONCURRENTLY ' : ''}${ifNotExists(s.ifNotExists)}${s.name === undefined ? '' : `${identSql(s.name)} `}ON ${nameSql(s.table)} ${s.definition}`;
    case 'DropIndex': return `DROP INDEX ${s.concurrently ? 'CONCURRENTLY ' : ''}${ifExists(s.ifExists)}${nameSql(s.name)}${s.cascade ? ' CASCADE' : ''}`;
    case 'ShowCatalogs': return `SHOW CATALOGS${s.like === undefined ? '' : ` LIKE ${stringSql(s.like)}`}`;
    case 'ShowSchemas': return `SHOW SCHEMAS${inLike(s.in, s.like)}`;
    case 'ShowTables': return `SHOW TABLES${inLike(s.in, s.like)}`;
    case 'ShowViews': return `SHOW VIEWS${inLike(s.in, s.like)}`;
    case 'DescribeTable': return `DESCRIBE TABLE ${nameSql(s.name)}`;
    case 'Use': return `USE ${nameSql(s.name)}`;
    case 'CreateUser': return `CREATE USER ${ifNotExists(s.ifNotExists)}${identSql(s.name)} ${userOptionsSql(s.options)}`;
    case 'AlterUserSet': return `ALTER USER ${identSql(s.name)} SET ${userOptionsSql(s.options)}`;
    case 'AlterUserUnset': return `ALTER USER ${identSql(s.name)} UNSET ${s.fields.map((f) => f.toUpperCase()).join(', ')}`;
    case 'AlterUserSuspend': return `ALTER USER ${identSql(s.name)} SUSPEND`;
    case 'AlterUserUnsuspend': return `ALTER USER ${identSql(s.name)} UNSUSPEND`;
    case 'AlterUserUnlock': return `ALTER USER ${identSql(s.name)} UNLOCK`;
    case 'AlterUserRename': return `ALTER USER ${identSql(s.name)} RENAME TO ${identSql(s.newName)}`;
    case 'AlterUserSetLegalHold': return `ALTER USER ${identSql(s.name)} SET LEGAL HOLD REASON = ${stringSql(s.reason)}`;
    case 'AlterUserClearLegalHold': return `ALTER USER ${identSql(s.name)} CLEAR LEGAL HOLD`;
    case 'AlterSelfPassword': return `ALTER USER SELF SET PASSWORD = ${stringSql(s.newPassword)} OLD PASSWORD = ${stringSql(s.oldPassword)}`;
    case 'AlterSelfEnrollMfa': return 'ALTER USER SELF ENROLL MFA TOTP';
    case 'AlterSelfVerifyMfa': return `ALTER USER SELF VERIFY MFA TOTP ${stringSql(s.code)}`;
    case 'AlterSelfDisableMfa': return `ALTER USER SELF DISABLE MFA WITH TOTP CODE ${stringSql(s.code)}`;
    case 'DropUser': return `DROP USER ${ifExists(s.ifExists)}${identSql(s.name)}${s.cascade ? ' CASCADE' : ''}`;
    case 'UndropUser': return `UNDROP USER ${identSql(s.name)}`;
    case 'ExpungeUser': return `EXPUNGE USER ${identSql(s.name)} REASON = ${stringSql(s.reason)}`;
    case 'ShowUsers': return `SHOW USERS${s.like === undefined ? '' : ` LIKE ${stringSql(s.like)}`}${s.status === undefined ? '' : ` WHERE STATUS = ${stringSql(s.status)}`}`;
    case 'DescribeUser': return `DESCRIBE USER ${identSql(s.name)}`;
    case 'RedeemInvitation': return `REDEEM INVITATION ${stringSql(s.token)} WITH PASSWORD ${stringSql(s.password)}`;
    case 'CreateServiceAccount':
      return `CREATE SERVICE ACCOUNT ${ifNotExists(s.ifNotExists)}${identSql(s.name)}${s.defaultRole === undefined ? '' : ` DEFAULT_ROLE = ${stringSql(s.defaultRole)}`}${s.comment === undefined ? '' : ` COMMENT = ${stringSql(s.comment)}`}`;
    case 'DropServiceAccount': return `DROP SERVICE ACCOUNT ${ifExists(s.ifExists)}${identSql(s.name)}`;
    case 'AddKeypair':
      return `ALTER SERVICE ACCOUNT ${identSql(s.account)} ADD KEYPAIR KEY_ID = ${stringSql(s.keyId)} PUBLIC_KEY = ${stringSql(s.publicKey)}${s.algorithm === undefined ? '' : ` ALGORITHM = ${s.algorithm}`}`;
    case 'DropKeypair': return `ALTER SERVICE ACCOUNT ${identSql(s.account)} DROP KEYPAIR ${ifExists(s.ifExists)}KEY_ID = ${stringSql(s.keyId)}`;
    case 'ShowServiceAccounts': return 'SHOW SERVICE ACCOUNTS';
    case 'CreatePat':
      return `CREATE PERSONAL ACCESS TOKEN ${identSql(s.name)}${s.forUser === undefined ? '' : ` FOR ${identSql(s.forUser)}`}${s.ttl === undefined ? '' : ` TTL = ${stringSql(s.ttl)}`}${s.scope === undefined ? '' : ` SCOPE = ${stringSql(s.scope)}`}`;
    case 'DropPat': return `DROP PERSONAL ACCESS TOKEN ${ifExists(s.ifExists)}${identSql(s.name)}${s.forUser === undefined ? '' : ` FOR ${identSql(s.forUser)}`}`;
    case 'ShowPats': return `SHOW PERSONAL ACCESS TOKENS${s.forUser === undefined ? '' : ` FOR ${identSql(s.forUser)}`}`;
    case 'CreateWebhook':
      return `CREATE WEBHOOK ${ifNotExists(s.ifNotExists)}${identSql(s.name)} URL = ${stringSql(s.url)} SECRET = ${stringSql(s.secret)}${s.events === undefined ? '' : ` EVENTS = (${s.events.map(stringSql).join(', ')})`}`;
    case 'DropWebhook': return `DROP WEBHOOK ${ifExists(s.ifExists)}${identSql(s.name)}`;
    case 'ShowWebhooks': return 'SHOW WEBHOOKS';
    case 'GrantManage': return `GRANT ${s.privileges.map((x) => `MANAGE ${x}`).join(', ')} TO USER ${identSql(s.user)}`;
    case 'RevokeManage': return `REVOKE ${s.privileges.map((x) => `MANAGE ${x}`).join(', ')} FROM USER ${identSql(s.user)}`;
    case 'CreateRole': return `CREATE ROLE ${ifNotExists(s.ifNotExists)}${identSql(s.name)}`;
    case 'DropRole': return `DROP ROLE ${ifExists(s.ifExists)}${identSql(s.name)}`;
    case 'GrantRole': return `GRANT ROLE ${identSql(s.role)} TO USER ${identSql(s.user)}`;
    case 'RevokeRole': return `REVOKE ROLE ${identSql(s.role)} FROM USER ${identSql(s.user)}`;
    case 'SetWorkloadClass': return `SET svc.workload_class = ${stringSql(s.workloadClass)}`;
    case 'SetSession': return `SET ${settingName(s.name)} = ${s.value === undefined ? 'DEFAULT' : optionValueSql(s.value)}`;
    case 'ResetSession': return s.name === undefined ? 'RESET ALL' : `RESET ${settingName(s.name)}`;
    case 'ShowQueryHistory': return `SHOW QUERY HISTORY${s.limit === undefined ? '' : ` LIMIT ${s.limit}`}`;
    case 'ShowResourceGroups': return 'SHOW RESOURCE GROUPS';
    default: return unreachable(s);
  }
}
