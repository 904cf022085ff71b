/**
 * Ohm semantics: the token-level CST of sql.ohm → the IR of ir.ts. One action per rule (case
 * labels become `rule_case` actions). Semantic checks that the grammar cannot express (duplicate
 * clauses, a missing EMAIL, an unknown workload class) throw SYNTAX_ERROR at the offending token.
 */
import type { NonterminalNode, Node as OhmNode, IterationNode } from 'ohm-js';
import type { SqlActionDict, SqlSemantics } from './sql.ohm-bundle.js';
import { FloeError } from './errors.js';
import { lineColumn, type TokenString } from './lexer.js';
import {
  make, ident as mkIdent, qualifiedName, isExpr,
  type Span, type Expr, type Relation, type Ident, type QualifiedName, type FunctionCall, type SelectItem, type SelectExpr, type ColumnRef,
  type OrderItem, type WindowSpec, type DataType, type PrimitiveTypeName, type BinaryOp, type ComparisonOp,
  type Statement, type TableAlias, type GroupingElement, type UserOptions, type UserField, type OptionEntry,
  type OptionValue, type CopyOnError, type CopyMatchByColumnName, type StageGranteeKind, type PartitionField, type ColumnDef, type Assignment, type IntervalUnit, type FrameBound,
  type NamedWindow, type CteDef, type MergeClause, type PrincipalStatus, type KeyAlgorithm, type ManagePrivilege,
  type WorkloadClass, type AlterTableAction, type TimeTravel, type RefusedConstraint, type RefusedConstraintKind,
} from './ir.js';

/** What one parse needs beside the CST: the source text and token offsets. */
export interface ParseContext {
  readonly text: string;
  readonly tokens: TokenString;
  /** Spans of secret literals (passwords, tokens, TOTP codes, webhook secrets), for redaction. */
  readonly secrets: Span[];
  /** CTE names in scope, innermost last (lower-case). */
  readonly cteScopes: Set<string>[];
}

/** Aggregate function names (lower-case) counted by Aggregate nodes and planFeatures. */
export const AGGREGATE_FUNCTIONS: ReadonlySet<string> = new Set([
  'count', 'sum', 'avg', 'min', 'max', 'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop', 'var_samp',
  'string_agg', 'listagg', 'group_concat', 'array_agg', 'list', 'bool_and', 'bool_or', 'every', 'any_value',
  'first', 'last', 'arg_min', 'arg_max', 'argmin', 'argmax', 'min_by', 'max_by', 'approx_count_distinct',
  'approx_quantile', 'quantile', 'quantile_cont', 'quantile_disc', 'median', 'mode', 'count_if', 'countif',
  'bit_and', 'bit_or', 'bit_xor', 'corr', 'covar_pop', 'covar_samp', 'regr_slope', 'regr_intercept',
  'regr_count', 'regr_r2', 'regr_avgx', 'regr_avgy', 'product', 'fsum', 'kahan_sum', 'sumkahan', 'histogram',
  'entropy', 'kurtosis', 'skewness', 'geomean', 'mad', 'bitstring_agg', 'percentile_cont', 'percentile_disc',
]);

/** Whether a call is an aggregate (not a window call): a known aggregate name, or FILTER given. */
export function isAggregateCall(call: FunctionCall): boolean {
  if (call.over !== undefined) return false;
  const last = call.name.parts[call.name.parts.length - 1];
  return call.filter !== undefined || (last !== undefined && AGGREGATE_FUNCTIONS.has(last.name.toLowerCase()));
}

/**
 * Most operators (binary, prefix NOT and signs, postfix :: and [ ]) in one flat expression chain.
 * A chain becomes a tree as deep as it is long, and every walker of the IR (unparse, the planner)
 * recurses once per level: 1000 keeps them a wide margin from a stack overflow. Long generated
 * OR chains should be IN lists, which have no limit.
 */
export const MAX_EXPRESSION_CHAIN = 1000;

// Precedence levels of the flat operator chain (higher binds tighter), as in PostgreSQL.
const PREC_OR = 1;
const PREC_AND = 2;
const PREC_NOT = 3;
const PREC_IS = 4;
const PREC_CMP = 5;
const PREC_LIKE = 6;
const PREC_CONCAT = 7;
const PREC_ADD = 8;
const PREC_MUL = 9;

type BinToken =
  | { readonly kind: 'binary'; readonly op: BinaryOp }
  | { readonly kind: 'like'; readonly not: boolean; readonly caseInsensitive: boolean }
  | { readonly kind: 'escape' };
type Item =
  | { readonly t: 'not'; readonly start: number }
  | { readonly t: 'operand'; readonly expr: Expr }
  | { readonly t: 'bin'; readonly token: BinToken; readonly prec: number; readonly span: Span }
  | { readonly t: 'post'; readonly prec: number; readonly start: number; /** Blocks a following operator of its level (BETWEEN). */ readonly nonAssociative: boolean; readonly build: (left: Expr) => Expr };

/** Levels whose binary operators (and BETWEEN) do not associate: `a = b = c`, `a LIKE b IN (…)`. */
const NON_ASSOCIATIVE: ReadonlySet<number> = new Set([PREC_IS, PREC_CMP, PREC_LIKE]);

const COMPARE_CHARS: Readonly<Record<string, ComparisonOp>> = { '=': '=', '≠': '<>', '<': '<', '>': '>', '≤': '<=', '≥': '>=' };
const ARITH: Readonly<Record<string, readonly [BinaryOp, number]>> = {
  '+': ['+', PREC_ADD], '-': ['-', PREC_ADD], '*': ['*', PREC_MUL], '/': ['/', PREC_MUL], '%': ['%', PREC_MUL], '‖': ['||', PREC_CONCAT],
};

const PRIMITIVE_TYPES: Readonly<Record<string, PrimitiveTypeName>> = {
  boolean: 'boolean', bool: 'boolean', tinyint: 'tinyint', smallint: 'smallint', int2: 'smallint', integer: 'int',
  int4: 'int', int: 'int', int8: 'bigint', bigint: 'bigint', long: 'bigint', hugeint: 'hugeint', float8: 'double',
  float4: 'float', float: 'float', real: 'float', double: 'double', date: 'date', timestamptz: 'timestamptz',
  timestamp: 'timestamp', time: 'time', string: 'string', varchar: 'string', text: 'string', character: 'string',
  char: 'string', uuid: 'uuid', binary: 'binary', varbinary: 'binary', blob: 'binary', bytea: 'binary', json: 'json',
};

const INTERVAL_UNITS: Readonly<Record<string, IntervalUnit>> = {
  year: 'year', years: 'year', month: 'month', months: 'month', week: 'week', weeks: 'week', day: 'day', days: 'day',
  hour: 'hour', hours: 'hour', minute: 'minute', minutes: 'minute', second: 'second', seconds: 'second',
  millisecond: 'millisecond', milliseconds: 'millisecond', microsecond: 'microsecond', microseconds: 'microsecond',
};

const TRANSFORMS: Readonly<Record<string, PartitionField['transform']>> = {
  years: 'year', year: 'year', months: 'month', month: 'month', days: 'day', day: 'day', hours: 'hour', hour: 'hour',
  identity: 'identity', void: 'void', bucket: 'bucket', truncate: 'truncate',
};

/** The refused constraint of each grammar case (column and table forms). */
const REFUSED_CONSTRAINTS: Readonly<Record<string, RefusedConstraintKind>> = {
  refusedColumnConstraint_unique: 'unique', refusedColumnConstraint_check: 'check', refusedColumnConstraint_default: 'default',
  refusedColumnConstraint_references: 'references', refusedColumnConstraint_identity: 'identity',
  refusedColumnConstraint_generated: 'generated', refusedColumnConstraint_collate: 'collate',
  refusedColumnConstraint_autoincrement: 'autoincrement',
  tableConstraintBody_unique: 'unique', tableConstraintBody_check: 'check', tableConstraintBody_foreignKey: 'foreignKey',
};
function refusedKind(n: OhmNode): RefusedConstraintKind {
  const kind = REFUSED_CONSTRAINTS[n.ctorName];
  if (kind === undefined) throw new Error(`not a refused constraint: ${n.ctorName}`);
  return kind;
}

/** A table's `PRIMARY KEY (…)` constraint, between the element action and CREATE TABLE's. */
interface TablePrimaryKey { readonly kind: 'TablePrimaryKey'; readonly columns: readonly Ident[] }

const STATUSES: ReadonlySet<string> = new Set(['ACTIVE', 'INVITED', 'SUSPENDED', 'DEACTIVATED', 'PROVISIONED', 'LOCKED']);
const ALGORITHMS: ReadonlySet<string> = new Set(['RS256', 'RS512', 'ES256', 'ES384']);
const WORKLOAD_CLASSES: ReadonlySet<string> = new Set(['interactive', 'medium', 'batch']);

/** Decodes a string literal token ('…' with '' doubling, or E'…' with backslash escapes). */
export function decodeString(raw: string): string {
  if (raw.charCodeAt(0) === 39) return raw.slice(1, -1).replaceAll("''", "'");
  const body = raw.slice(2, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && i + 1 < body.length) {
      const e = body[++i]!;
      out += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e === 'b' ? '\b' : e === 'f' ? '\f' : e === '0' ? '\0' : e;
    } else if (c === "'" && body[i + 1] === "'") {
      out += "'";
      i++;
    } else {
      out += c;
    }
  }
  return out;
}

/** Creates the semantics (operation `ir`) over a grammar; `ctx()` gives the current parse's context. */
export function createActions(ctx: () => ParseContext): SqlActionDict<unknown> {
  // ---------------------------------------------------------------- helpers
  const span = (n: OhmNode): Span => {
    const c = ctx();
    const { startIdx, endIdx } = n.source;
    if (endIdx > startIdx) return { start: c.tokens.starts[startIdx]!, end: c.tokens.ends[endIdx - 1]! };
    const at = startIdx < c.tokens.starts.length ? c.tokens.starts[startIdx]! : c.text.length;
    return { start: at, end: at };
  };
  const text = (n: OhmNode): string => {
    const s = span(n);
    return ctx().text.slice(s.start, s.end);
  };
  const word = (n: OhmNode): string => text(n).toLowerCase();
  const spanFrom = (a: Span, b: Span): Span => ({ start: a.start, end: b.end });
  const fail = (n: OhmNode, expected: string, detail?: string): never => {
    const { line, column } = lineColumn(ctx().text, span(n).start);
    throw new FloeError('SYNTAX_ERROR', detail === undefined ? { line, column, expected } : { line, column, expected, detail });
  };
  const has = (iter: OhmNode): boolean => iter.children.length > 0;
  const opt = <T>(iter: OhmNode): T | undefined => (iter.children.length > 0 ? (iter.children[0]!.ir() as T) : undefined);
  const list = <T>(first: OhmNode, rest: OhmNode): T[] => [first.ir() as T, ...rest.children.map((c) => c.ir() as T)];
  const all = <T>(iter: OhmNode): T[] => iter.children.map((c) => c.ir() as T);
  const str = (n: OhmNode): string => decodeString(text(n));
  const secret = (n: OhmNode): string => {
    ctx().secrets.push(span(n));
    return str(n);
  };
  const int = (n: OhmNode): number => {
    const v = Number(text(n));
    if (!Number.isSafeInteger(v)) fail(n, 'a smaller integer');
    return v;
  };
  const identOf = (n: OhmNode): Ident => {
    const raw = text(n);
    if (raw.charCodeAt(0) === 34) return mkIdent(raw.slice(1, -1).replaceAll('""', '"'), span(n), true);
    return mkIdent(raw, span(n), false);
  };
  const nameValue = (n: OhmNode): string => {
    const v = n.ir() as string | Ident;
    return typeof v === 'string' ? v : v.name;
  };
  /** The `rule_case` node under a rule node whose body is a list of labelled cases. */
  const caseOf = (n: OhmNode): OhmNode => n.children[0]!;
  /** The constraints of one column definition, in source order (a later NULL/NOT NULL wins, as before). */
  const columnConstraints = (constraints: readonly OhmNode[]) => {
    let notNull = false;
    let comment: string | undefined;
    let primaryKey = false;
    const refused: RefusedConstraint[] = [];
    for (const c of constraints) {
      switch (caseOf(c).ctorName) {
        case 'columnConstraint_notNull': notNull = true; break;
        case 'columnConstraint_null': notNull = false; break;
        case 'columnConstraint_primaryKey':
          if (primaryKey) fail(c, 'one PRIMARY KEY per column');
          primaryKey = true;
          break;
        case 'columnConstraint_refused': refused.push(c.ir() as RefusedConstraint); break;
        default: comment = c.ir() as string;
      }
    }
    return { notNull, comment, primaryKey, refused };
  };
  const orderBy = (iter: OhmNode): OrderItem[] => (has(iter) ? (iter.children[0]!.ir() as OrderItem[]) : []);

  /** Precedence climbing over the flat chain of operands, prefix NOTs and operators. */
  const climb = (items: readonly Item[]): Expr => {
    let pos = 0;
    const parse = (minPrec: number): Expr => {
      const first = items[pos++]!;
      let left: Expr;
      if (first.t === 'not') {
        const operand = parse(PREC_NOT + 1);
        left = make('Unary', { start: first.start, end: operand.span.end }, { op: 'NOT', operand });
      } else if (first.t === 'operand') {
        left = first.expr;
      } else {
        throw new Error('operator chain out of order');
      }
      // Non-associative operators, as DuckDB has them: after a comparison, IS [NOT] DISTINCT FROM,
      // LIKE/ILIKE or BETWEEN, another operator of the same level is an error (`a = b = c`,
      // `a LIKE b IN (…)`), not a silent `(a = b) = c`. IN, IS NULL and = ANY (…) may be followed.
      let blockedLevel = 0;
      let afterBetween = false;
      for (;;) {
        const item = items[pos];
        if (item === undefined || item.t === 'not' || item.t === 'operand' || item.prec < minPrec) break;
        pos++;
        const escape = item.t === 'bin' && item.token.kind === 'escape';
        if (afterBetween && item.prec > PREC_LIKE) {
          // `x BETWEEN a AND b - NOT c`: the bound stopped at NOT, and DuckDB would read the rest
          // into the bound. Ask for parentheses instead of guessing.
          const { line, column } = lineColumn(ctx().text, item.t === 'bin' ? item.span.start : item.start);
          throw new FloeError('SYNTAX_ERROR', { line, column, expected: 'parentheses around the BETWEEN bound', detail: 'ambiguous BETWEEN bound' });
        }
        afterBetween = item.t === 'post' && item.nonAssociative;
        if (!escape && item.prec === blockedLevel) {
          const { line, column } = lineColumn(ctx().text, item.t === 'bin' ? item.span.start : item.start);
          throw new FloeError('SYNTAX_ERROR', { line, column, expected: 'parentheses around the left operand', detail: 'comparison operators do not associate' });
        }
        if (!escape) blockedLevel = (item.t === 'bin' || item.nonAssociative) && NON_ASSOCIATIVE.has(item.prec) ? item.prec : 0;
        if (item.t === 'post') {
          left = item.build(left);
          continue;
        }
        const tk = item.token;
        const next = items[pos];
        if (tk.kind === 'binary' && tk.op === '||' && next !== undefined && next.t === 'not') {
          // DuckDB reads `a || NOT NULL` as `(a ||) IS NOT NULL`: never guess, ask for parentheses.
          const { line, column } = lineColumn(ctx().text, next.start);
          throw new FloeError('SYNTAX_ERROR', { line, column, expected: 'an expression', detail: 'write NOT after || in parentheses' });
        }
        const right = parse(item.prec + 1);
        const s = spanFrom(left.span, right.span);
        if (tk.kind === 'binary') left = make('Binary', s, { op: tk.op, left, right });
        else if (tk.kind === 'like') left = make('Like', s, { not: tk.not, caseInsensitive: tk.caseInsensitive, expr: left, pattern: right, escape: undefined });
        else if (left.kind === 'Like' && left.escape === undefined) left = make('Like', s, { ...left, escape: right });
        else {
          const { line, column } = lineColumn(ctx().text, item.span.start);
          throw new FloeError('SYNTAX_ERROR', { line, column, expected: 'an operator', detail: 'ESCAPE must follow a LIKE pattern' });
        }
      }
      return left;
    };
    return parse(0);
  };

  /** Applies postfix operators (:: and [ ]) and then unary signs (innermost last) to a primary. */
  const tooLong = (n: OhmNode): never =>
    fail(n, `at most ${MAX_EXPRESSION_CHAIN} operators in one expression`, 'expression too long; use IN (…) for long lists');
  const operand = (signs: OhmNode, primary: OhmNode, ops: OhmNode, args: OhmNode): Expr => {
    if (signs.children.length > MAX_EXPRESSION_CHAIN) tooLong(signs.children[MAX_EXPRESSION_CHAIN]!);
    if (ops.children.length > MAX_EXPRESSION_CHAIN) tooLong(ops.children[MAX_EXPRESSION_CHAIN]!);
    let e = primary.ir() as Expr;
    ops.children.forEach((op, i) => {
      const arg = args.children[i]!;
      if (i > 0 && op.sourceString === '[' && ops.children[i - 1]!.sourceString === '∷') {
        // DuckDB reads `a::int[2]` as a cast to the array type INTEGER[2], we would read a subscript.
        fail(op, 'parentheses around the cast', 'ambiguous subscript after ::');
      }
      const s = spanFrom(e.span, span(arg));
      if (op.sourceString === '∷') e = make('Cast', s, { try: false, expr: e, type: arg.ir() as DataType });
      else e = make('Subscript', { start: s.start, end: s.end + 1 }, { expr: e, index: arg.ir() as Expr });
    });
    const signNodes = signs.children;
    for (let i = signNodes.length - 1; i >= 0; i--) {
      const sn = signNodes[i]!;
      e = make('Unary', spanFrom(span(sn), e.span), { op: sn.sourceString === '-' ? '-' : '+', operand: e });
    }
    return e;
  };

  /** Aggregate and window calls in expressions of one SELECT block (not inside subqueries). */
  const collectCalls = (roots: readonly unknown[]): { aggregates: FunctionCall[]; windows: FunctionCall[] } => {
    const aggregates: FunctionCall[] = [];
    const windows: FunctionCall[] = [];
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) {
        for (const x of v) visit(x);
        return;
      }
      if (v === null || typeof v !== 'object') return;
      const n = v as { kind?: string };
      if (n.kind === 'ScalarSubquery' || n.kind === 'Exists') return;
      if (n.kind === 'InSubquery' || n.kind === 'Quantified') {
        visit((n as { expr?: unknown; left?: unknown }).expr ?? (n as { left?: unknown }).left);
        return;
      }
      if (n.kind === 'FunctionCall') {
        const call = n as FunctionCall;
        if (call.over !== undefined) windows.push(call);
        else if (isAggregateCall(call)) aggregates.push(call);
      }
      for (const [k, x] of Object.entries(n)) if (k !== 'span' && k !== 'kind' && typeof x === 'object') visit(x);
    };
    visit(roots);
    return { aggregates, windows };
  };

  const userOptions = (clauses: readonly OhmNode[], allowIdentitySource: boolean): UserOptions => {
    const out: Record<string, unknown> = {};
    for (const c of clauses) {
      const key = caseOf(c).ctorName.slice('userOption_'.length);
      if (key in out) fail(c, 'another clause', `duplicate ${text(caseOf(c).children[0]!).toUpperCase()} clause`);
      if (key === 'identitySource' && !allowIdentitySource) fail(c, 'an alterable user property', 'IDENTITY_SOURCE cannot be altered');
      out[key] = c.ir();
    }
    return out as UserOptions;
  };

  const uniqueClauses = (clauses: readonly OhmNode[], prefix: string): Map<string, OhmNode> => {
    const seen = new Map<string, OhmNode>();
    for (const c of clauses) {
      const key = caseOf(c).ctorName.slice(prefix.length);
      if (seen.has(key)) fail(c, 'another clause', `duplicate ${text(caseOf(c).children[0]!).toUpperCase()} clause`);
      seen.set(key, c);
    }
    return seen;
  };

  const resolveTable = (names: QualifiedName, alias: TableAlias | undefined, timeTravel: TimeTravel | undefined, s: Span): Relation => {
    const only = names.parts.length === 1 ? names.parts[0]! : undefined;
    if (only !== undefined && timeTravel === undefined) {
      const key = only.name.toLowerCase();
      const scopes = ctx().cteScopes;
      for (let i = scopes.length - 1; i >= 0; i--) if (scopes[i]!.has(key)) return make('CteRef', s, { name: only, alias });
    }
    return make('Scan', s, { table: names, alias, timeTravel });
  };

  const properties = (first: OhmNode, rest: OhmNode): OptionEntry[] => list<OptionEntry>(first, rest);

  const call = (s: Span, name: QualifiedName, args: OhmNode, filter: OhmNode | undefined, over: OhmNode | undefined): FunctionCall => {
    const a = args.ir() as { args: Expr[]; star: boolean; distinct: boolean; orderBy: OrderItem[] };
    return make('FunctionCall', s, {
      name, ...a,
      filter: filter === undefined ? undefined : (filter.ir() as Expr),
      over: over === undefined ? undefined : (over.ir() as WindowSpec),
    });
  };

  // ---------------------------------------------------------------- actions
  const actions: SqlActionDict<unknown> = {
    _iter(...children) {
      return children.map((c) => c.ir());
    },
    _terminal() {
      return this.sourceString;
    },
    program(stmt, _semi, _end) {
      return stmt.ir();
    },
    explain(_kw, analyze, target) {
      return make('Explain', span(this), { analyze: has(analyze), statement: target.ir() as never });
    },
    explainTarget(s) {
      const r = s.ir() as Relation | Statement;
      return s.ctorName === 'query' ? make('Query', span(this), { body: r as Relation }) : r;
    },
    statement(s) {
      return s.ctorName === 'query' ? make('Query', span(this), { body: s.ir() as Relation }) : s.ir();
    },

    // ------------------------------------------------------------ queries
    query(withIter, setExpr, orderIter, limitIter) {
      const c = ctx();
      let scope: Set<string> | undefined;
      let ctes: CteDef[] = [];
      let recursive = false;
      const withNode = withIter.children[0];
      if (withNode !== undefined) {
        const [, recIter, first, , rest] = withNode.children as [OhmNode, OhmNode, OhmNode, OhmNode, OhmNode];
        recursive = has(recIter);
        const defs = [first, ...rest.children];
        scope = new Set();
        c.cteScopes.push(scope);
        if (recursive) for (const d of defs) scope.add((d.children[0]!.ir() as Ident).name.toLowerCase());
        ctes = defs.map((d) => {
          const def = d.ir() as CteDef;
          scope!.add(def.name.name.toLowerCase());
          return def;
        });
      }
      try {
        let body = setExpr.ir() as Relation;
        const order = orderIter.children[0];
        if (order !== undefined) body = make('Sort', spanFrom(body.span, span(order)), { input: body, keys: order.ir() as OrderItem[] });
        const limit = limitIter.children[0];
        if (limit !== undefined) {
          const l = limit.ir() as { count: Expr | undefined; offset: Expr | undefined };
          body = make('Limit', spanFrom(body.span, span(limit)), { input: body, count: l.count, offset: l.offset });
        }
        if (withNode !== undefined) body = make('With', span(this), { recursive, ctes, body });
        return body;
      } finally {
        if (scope !== undefined) c.cteScopes.pop();
      }
    },
    cteDef(name, cols, _as, mat, _open, query, _close) {
      const m = mat.children[0];
      return make('CteDef', span(this), {
        name: name.ir() as Ident,
        columns: opt<Ident[]>(cols) ?? [],
        materialized: m === undefined ? undefined : !has(m.children[0]!),
        query: query.ir() as Relation,
      });
    },
    setExpr(first, ops, terms) {
      let left = first.ir() as Relation;
      ops.children.forEach((op, i) => {
        const right = terms.children[i]!.ir() as Relation;
        const [kw, q] = op.children as [OhmNode, OhmNode];
        left = make('SetOp', spanFrom(left.span, right.span), {
          op: word(kw) === 'union' ? 'UNION' : 'EXCEPT', all: has(q) && word(q) === 'all', left, right,
        });
      });
      return left;
    },
    setTerm(first, _kws, quants, prims) {
      let left = first.ir() as Relation;
      prims.children.forEach((p, i) => {
        const right = p.ir() as Relation;
        const q = quants.children[i]!;
        left = make('SetOp', spanFrom(left.span, right.span), { op: 'INTERSECT', all: has(q) && word(q) === 'all', left, right });
      });
      return left;
    },
    parenQuery(_o, q, _c) {
      return q.ir();
    },
    selectCore(_select, distinctIter, first, _commas, rest, fromIter, whereIter, groupIter, havingIter, windowIter, qualifyIter) {
      const whole = span(this);
      const items = list<SelectItem>(first, rest);
      let rel: Relation = has(fromIter)
        ? (fromIter.children[0]!.ir() as Relation)
        : make('OneRow', { start: whole.end, end: whole.end }, {});
      const where = whereIter.children[0];
      if (where !== undefined) rel = make('Filter', span(where), { input: rel, predicate: where.ir() as Expr, clause: 'WHERE' });
      const having = havingIter.children[0]?.ir() as Expr | undefined;
      const qualify = qualifyIter.children[0]?.ir() as Expr | undefined;
      const { aggregates, windows } = collectCalls([items, having, qualify]);
      const group = groupIter.children[0];
      if (group !== undefined || aggregates.length > 0 || having !== undefined) {
        rel = make('Aggregate', group !== undefined ? span(group) : whole, {
          input: rel, groupBy: group !== undefined ? (group.ir() as GroupingElement[]) : [], aggregates,
        });
      }
      if (having !== undefined) rel = make('Filter', span(havingIter.children[0]!), { input: rel, predicate: having, clause: 'HAVING' });
      const named = windowIter.children[0];
      if (windows.length > 0 || named !== undefined) {
        rel = make('Window', named !== undefined ? span(named) : whole, {
          input: rel, functions: windows, windows: named !== undefined ? (named.ir() as NamedWindow[]) : [],
        });
      }
      if (qualify !== undefined) rel = make('Filter', span(qualifyIter.children[0]!), { input: rel, predicate: qualify, clause: 'QUALIFY' });
      rel = make('Project', whole, { input: rel, items });
      const distinct = distinctIter.children[0];
      if (distinct !== undefined) {
        const d = distinct.ir() as { on: Expr[] | undefined } | null;
        if (d !== null) rel = make('Distinct', span(distinct), { input: rel, on: d.on });
      }
      return rel;
    },
    distinctSpec_on(_d, _on, _o, exprs, _c) {
      return { on: exprs.ir() };
    },
    distinctSpec_distinct(_d) {
      return { on: undefined };
    },
    distinctSpec_all(_a) {
      return null;
    },
    selectItem_star(s) {
      return s.ir();
    },
    selectItem_expr(e, aliasIter) {
      return make('SelectExpr', span(this), { expr: e.ir() as Expr, alias: opt<Ident>(aliasIter) });
    },
    selectAlias(_as, name) {
      return name.ir();
    },
    starItem(quals, _star, exclude) {
      return make('Star', span(this), { qualifier: all<Ident>(quals), exclude: opt<Ident[]>(exclude) ?? [] });
    },
    starQualifier(name, _dot) {
      return name.ir();
    },
    starExclude(_kw, _o, names, _c) {
      return names.ir();
    },
    valuesClause(_kw, first, _c, rest) {
      return make('Values', span(this), { rows: list<Expr[]>(first, rest) });
    },
    valuesRow(_o, exprs, _c) {
      return exprs.ir();
    },
    fromClause(_from, first, _c, rest) {
      const tables = list<Relation>(first, rest);
      let rel = tables[0]!;
      for (const right of tables.slice(1)) {
        rel = make('Join', spanFrom(rel.span, right.span), { joinType: 'CROSS', natural: false, implicit: true, left: rel, right, condition: undefined });
      }
      return rel;
    },
    joinedTable(first, tails) {
      let rel = first.ir() as Relation;
      for (const t of tails.children) {
        const j = t.ir() as { joinType: 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS'; natural: boolean; right: Relation; condition: never };
        rel = make('Join', spanFrom(rel.span, span(t)), { joinType: j.joinType, natural: j.natural, implicit: false, left: rel, right: j.right, condition: j.condition });
      }
      return rel;
    },
    joinTail(_la, body) {
      return body.ir();
    },
    joinTailBody_cross(_c, _j, right) {
      return { joinType: 'CROSS', natural: false, right: right.ir(), condition: undefined };
    },
    joinTailBody_natural(_n, type, _j, right) {
      return { joinType: opt(type) ?? 'INNER', natural: true, right: right.ir(), condition: undefined };
    },
    joinTailBody_qualified(type, _j, right, cond) {
      return { joinType: opt(type) ?? 'INNER', natural: false, right: right.ir(), condition: cond.ir() };
    },
    joinType_inner(_) {
      return 'INNER';
    },
    joinType_left(_l, _o) {
      return 'LEFT';
    },
    joinType_right(_r, _o) {
      return 'RIGHT';
    },
    joinType_full(_f, _o) {
      return 'FULL';
    },
    joinCondition_on(_on, e) {
      return make('On', span(this), { expr: e.ir() as Expr });
    },
    joinCondition_using(_u, _o, names, _c) {
      return make('Using', span(this), { columns: names.ir() as Ident[] });
    },
    tablePrimary_derived(lateral, _o, query, _c, alias) {
      return make('Derived', span(this), { query: query.ir() as Relation, alias: opt<TableAlias>(alias), lateral: has(lateral) });
    },
    tablePrimary_paren(_o, joined, _c) {
      return joined.ir();
    },
    tablePrimary_function(names, _o, args, _c, alias) {
      return make('TableFunction', span(this), { name: names.ir() as QualifiedName, args: opt<Expr[]>(args) ?? [], alias: opt<TableAlias>(alias) });
    },
    tablePrimary_table(names, tt, alias) {
      return resolveTable(names.ir() as QualifiedName, opt<TableAlias>(alias), opt<TimeTravel>(tt), span(this));
    },
    timeTravel(_for, body) {
      return body.ir();
    },
    timeTravelBody_version(_v, _as, _of, e) {
      return make('AsOfVersion', span(this), { version: e.ir() as Expr });
    },
    timeTravelBody_timestamp(_t, _as, _of, e) {
      return make('AsOfTimestamp', span(this), { timestamp: e.ir() as Expr });
    },
    tableAlias(_as, name, cols) {
      return make('TableAlias', span(this), { name: name.ir() as Ident, columns: opt<Ident[]>(cols) ?? [] });
    },
    columnList(_o, names, _c) {
      return names.ir();
    },
    whereClause(_kw, e) {
      return e.ir();
    },
    havingClause(_kw, e) {
      return e.ir();
    },
    qualifyClause(_kw, e) {
      return e.ir();
    },
    groupByClause(_g, _b, first, _c, rest) {
      return list<GroupingElement>(first, rest);
    },
    groupingElement_rollup(_kw, _o, exprs, _c) {
      return make('Rollup', span(this), { exprs: exprs.ir() as Expr[] });
    },
    groupingElement_cube(_kw, _o, exprs, _c) {
      return make('Cube', span(this), { exprs: exprs.ir() as Expr[] });
    },
    groupingElement_sets(_g, _s, _o, first, _c, rest, _cl) {
      return make('GroupingSets', span(this), { sets: list<Expr[]>(first, rest) });
    },
    groupingElement_empty(_o, _c) {
      return make('EmptyGroupingSet', span(this), {});
    },
    groupingElement_expr(e) {
      return e.ir();
    },
    groupingSet_list(_o, exprs, _c) {
      return opt<Expr[]>(exprs) ?? [];
    },
    groupingSet_single(e) {
      return [e.ir()];
    },
    windowClause(_kw, first, _c, rest) {
      return list<NamedWindow>(first, rest);
    },
    namedWindow(name, _as, _o, spec, _c) {
      return make('NamedWindow', span(this), { name: name.ir() as Ident, spec: spec.ir() as WindowSpec });
    },
    windowSpec(base, partition, order, frame) {
      return make('WindowSpec', span(this), {
        base: opt<Ident>(base),
        partitionBy: opt<Expr[]>(partition) ?? [],
        orderBy: orderBy(order),
        frame: opt(frame),
      });
    },
    baseWindow(name) {
      return name.ir();
    },
    partitionClause(_p, _b, exprs) {
      return exprs.ir();
    },
    frameClause(units, extent, exclude) {
      const e = extent.ir() as [FrameBound, FrameBound | undefined];
      const ex = exclude.children[0];
      return make('WindowFrame', span(this), {
        units: word(units).toUpperCase() as 'ROWS' | 'RANGE' | 'GROUPS',
        start: e[0],
        end: e[1],
        exclude: ex === undefined ? undefined : (ex.ir() as 'CURRENT ROW' | 'GROUP' | 'TIES' | 'NO OTHERS'),
      });
    },
    frameExtent_between(_b, start, _and, end) {
      return [start.ir(), end.ir()];
    },
    frameExtent_single(b) {
      return [b.ir(), undefined];
    },
    frameBound_unboundedPreceding(_u, _p) {
      return make('UnboundedPreceding', span(this), {});
    },
    frameBound_unboundedFollowing(_u, _f) {
      return make('UnboundedFollowing', span(this), {});
    },
    frameBound_currentRow(_c, _r) {
      return make('CurrentRow', span(this), {});
    },
    frameBound_preceding(e, _p) {
      return make('Preceding', span(this), { offset: e.ir() as Expr });
    },
    frameBound_following(e, _f) {
      return make('Following', span(this), { offset: e.ir() as Expr });
    },
    frameExclude_currentRow(_e, _c, _r) {
      return 'CURRENT ROW';
    },
    frameExclude_group(_e, _g) {
      return 'GROUP';
    },
    frameExclude_ties(_e, _t) {
      return 'TIES';
    },
    frameExclude_noOthers(_e, _n, _o) {
      return 'NO OTHERS';
    },
    orderByClause(_o, _b, first, _c, rest) {
      return list<OrderItem>(first, rest);
    },
    orderItem(e, dir, nulls) {
      const d = dir.children[0];
      const n = nulls.children[0];
      return make('OrderItem', span(this), {
        expr: e.ir() as Expr,
        direction: d === undefined ? undefined : word(d) === 'desc' ? 'DESC' : 'ASC',
        nulls: n === undefined ? undefined : word(n.children[1]!) === 'first' ? 'FIRST' : 'LAST',
      });
    },
    limitClause_limit(_l, count, off) {
      return { count: count.ir(), offset: opt(off) };
    },
    limitClause_offsetLimit(off, _l, count) {
      return { count: count.ir(), offset: off.ir() };
    },
    limitClause_offsetFetch(off, fetch) {
      return { count: opt(fetch), offset: off.ir() };
    },
    limitClause_fetch(fetch) {
      return { count: fetch.ir(), offset: undefined };
    },
    offsetClause(_o, e, _rows) {
      return e.ir();
    },
    fetchClause(_f, _first, count, _rows, _only) {
      return opt<Expr>(count) ?? make('NumberLiteral', span(this), { text: '1' });
    },

    // ------------------------------------------------------------ expressions
    exprList(first, _c, rest) {
      return list<Expr>(first, rest);
    },
    expr(first, tails) {
      if (tails.children.length > MAX_EXPRESSION_CHAIN) tooLong(tails.children[MAX_EXPRESSION_CHAIN]!);
      const items = first.ir() as Item[];
      if (tails.children.length === 0 && items.length === 1) return (items[0] as { expr: Expr }).expr;
      for (const t of tails.children) for (const it of t.ir() as Item[]) items.push(it);
      return climb(items);
    },
    exprOperand(nots, signs, primary, ops, args) {
      if (nots.children.length > MAX_EXPRESSION_CHAIN) tooLong(nots.children[MAX_EXPRESSION_CHAIN]!);
      const items: Item[] = nots.children.map((n) => ({ t: 'not', start: span(n).start }));
      items.push({ t: 'operand', expr: operand(signs, primary, ops, args) });
      return items;
    },
    exprTail(_la, body) {
      return body.ir();
    },
    exprTailBody_binary(op, rhs) {
      const o = op.ir() as { token: BinToken; prec: number };
      return [{ t: 'bin', token: o.token, prec: o.prec, span: span(op) }, ...(rhs.ir() as Item[])];
    },
    exprTailBody_is(_is, not, value) {
      const v = word(value).toUpperCase() as 'NULL' | 'TRUE' | 'FALSE' | 'UNKNOWN';
      const end = span(this).end;
      return [{ t: 'post', prec: PREC_IS, start: span(this).start, nonAssociative: false, build: (left: Expr) => make('Is', { start: left.span.start, end }, { not: has(not), expr: left, value: v }) }];
    },
    exprTailBody_between(not, _b, low, _and, high) {
      const lo = low.ir() as Expr;
      const hi = high.ir() as Expr;
      return [{ t: 'post', prec: PREC_LIKE, start: span(this).start, nonAssociative: true, build: (left: Expr) => make('Between', spanFrom(left.span, hi.span), { not: has(not), symmetric: false, expr: left, low: lo, high: hi }) }];
    },
    exprTailBody_inSubquery(not, _in, _o, query, _c) {
      const q = query.ir() as Relation;
      const end = span(this).end;
      return [{ t: 'post', prec: PREC_LIKE, start: span(this).start, nonAssociative: false, build: (left: Expr) => make('InSubquery', { start: left.span.start, end }, { not: has(not), expr: left, query: q }) }];
    },
    exprTailBody_inList(not, _in, _o, exprs, _c) {
      const l = exprs.ir() as Expr[];
      const end = span(this).end;
      return [{ t: 'post', prec: PREC_LIKE, start: span(this).start, nonAssociative: false, build: (left: Expr) => make('InList', { start: left.span.start, end }, { not: has(not), expr: left, list: l }) }];
    },
    exprTailBody_quantified(op, quant, _o, query, _c) {
      const cmp = COMPARE_CHARS[op.sourceString]!;
      const q = word(quant) === 'all' ? 'ALL' : 'ANY';
      const rel = query.ir() as Relation;
      const end = span(this).end;
      return [{ t: 'post', prec: PREC_CMP, start: span(this).start, nonAssociative: false, build: (left: Expr) => make('Quantified', { start: left.span.start, end }, { op: cmp, quantifier: q, left, query: rel }) }];
    },
    binaryOp(op) {
      switch (op.ctorName) {
        case 'compareOp':
          return { token: { kind: 'binary', op: COMPARE_CHARS[op.sourceString]! }, prec: PREC_CMP };
        case 'arithOp': {
          const [o, p] = ARITH[op.sourceString]!;
          return { token: { kind: 'binary', op: o }, prec: p };
        }
        case 'kw_and':
          return { token: { kind: 'binary', op: 'AND' }, prec: PREC_AND };
        case 'kw_or':
          return { token: { kind: 'binary', op: 'OR' }, prec: PREC_OR };
        case 'likeOp': {
          const [not, kw] = op.children as [OhmNode, OhmNode];
          return { token: { kind: 'like', not: has(not), caseInsensitive: word(kw) === 'ilike' }, prec: PREC_LIKE };
        }
        case 'isDistinctOp':
          return { token: { kind: 'binary', op: has(op.children[1]!) ? 'IS NOT DISTINCT FROM' : 'IS DISTINCT FROM' }, prec: PREC_IS };
        default:
          return { token: { kind: 'escape' }, prec: PREC_LIKE };
      }
    },
    arithExpr(first, ops, rest) {
      if (ops.children.length > MAX_EXPRESSION_CHAIN) tooLong(ops.children[MAX_EXPRESSION_CHAIN]!);
      if (ops.children.length === 0) return first.ir();
      const items: Item[] = [{ t: 'operand', expr: first.ir() as Expr }];
      ops.children.forEach((op, i) => {
        const [o, p] = ARITH[op.sourceString]!;
        items.push({ t: 'bin', token: { kind: 'binary', op: o }, prec: p, span: span(op) });
        items.push({ t: 'operand', expr: rest.children[i]!.ir() as Expr });
      });
      return climb(items);
    },
    unary(signs, primary, ops, args) {
      return operand(signs, primary, ops, args);
    },
    subscript(e, _c) {
      return e.ir();
    },
    wordLed(_la, x) {
      return x.ir();
    },
    parenExpr_subquery(_o, q, _c) {
      return make('ScalarSubquery', span(this), { query: q.ir() as Relation });
    },
    parenExpr_exprs(_o, exprs, _c) {
      const es = exprs.ir() as Expr[];
      return es.length === 1 ? es[0] : make('Row', span(this), { items: es });
    },
    keywordPrimary(_la, body) {
      return body.ir();
    },
    keywordPrimaryBody_case(_case, operandIter, whens, elseIter, _end) {
      return make('Case', span(this), { operand: opt<Expr>(operandIter), whens: all(whens), else: opt<Expr>(elseIter) });
    },
    keywordPrimaryBody_cast(kw, _o, e, _as, type, _c) {
      return make('Cast', span(this), { try: word(kw) === 'try_cast', expr: e.ir() as Expr, type: type.ir() as DataType });
    },
    keywordPrimaryBody_extract(_kw, _o, field, _from, e, _c) {
      return make('Extract', span(this), { field: (field.ir() as Ident).name.toLowerCase(), expr: e.ir() as Expr });
    },
    keywordPrimaryBody_substring(kw, _o, e, _from, start, forIter, _c) {
      const args = [e.ir() as Expr, start.ir() as Expr];
      const f = opt<Expr>(forIter);
      if (f !== undefined) args.push(f);
      const name = qualifiedName([mkIdent(text(kw), span(kw))], span(kw));
      return make('FunctionCall', span(this), { name, args, star: false, distinct: false, orderBy: [], filter: undefined, over: undefined });
    },
    keywordPrimaryBody_exists(_kw, _o, q, _c) {
      return make('Exists', span(this), { query: q.ir() as Relation });
    },
    keywordPrimaryBody_interval(_kw, value, unit) {
      const u = unit.children[0];
      return make('IntervalLiteral', span(this), { value: value.ir() as Expr, unit: u === undefined ? undefined : INTERVAL_UNITS[word(u)] });
    },
    keywordPrimaryBody_typed(type, value) {
      return make('TypedLiteral', span(this), { type: type.ir() as 'date', value: str(value) });
    },
    caseOperand(e) {
      return e.ir();
    },
    caseWhen(_w, when, _t, then) {
      return make('CaseWhen', span(this), { when: when.ir() as Expr, then: then.ir() as Expr });
    },
    caseElse(_e, e) {
      return e.ir();
    },
    substringFor(_f, e) {
      return e.ir();
    },
    intervalValue_string(s) {
      return s.ir();
    },
    intervalValue_number(n) {
      return n.ir();
    },
    intervalValue_expr(_o, e, _c) {
      return e.ir();
    },
    typedLiteralKeyword_timestamptz(_) {
      return 'timestamptz';
    },
    typedLiteralKeyword_timestampWithZone(_t, _w, _ti, _z) {
      return 'timestamptz';
    },
    typedLiteralKeyword_timestamp(_) {
      return 'timestamp';
    },
    typedLiteralKeyword_date(_) {
      return 'date';
    },
    typedLiteralKeyword_time(_) {
      return 'time';
    },
    listLiteral(_o, items, _c) {
      return make('ListLiteral', span(this), { items: opt<Expr[]>(items) ?? [] });
    },
    structLiteral(_o, first, _c, rest, _cl) {
      return make('StructLiteral', span(this), { entries: list(first, rest) });
    },
    structEntry(key, _colon, value) {
      const k = key.ctorName === 'stringLit' ? str(key) : (key.ir() as Ident).name;
      return make('StructEntry', span(this), { key: k, value: value.ir() as Expr });
    },
    callOrColumn(names, _dot, positional, _o, args, _c, filter, over) {
      const base = names.ir() as QualifiedName;
      const name = has(positional) ? qualifiedName([...base.parts, ...(positional.children[0]!.ir() as ColumnRef).parts], span(this)) : base;
      if (has(positional) && has(args)) fail(args.children[0]!, 'the end of the column reference', 'a positional column is not a function');
      if (!has(args)) return make('ColumnRef', span(this), { parts: name.parts });
      // inside the optional group, each `?` is itself an iteration node
      return call(span(this), name, args.children[0]!, filter.children[0]!.children[0], over.children[0]!.children[0]);
    },
    keywordPrimaryBody_leftRight(kw, _o, args, _c, filter, over) {
      return call(span(this), qualifiedName([identOf(kw)], span(kw)), args, filter.children[0], over.children[0]);
    },
    functionArgs_star(_s) {
      return { args: [], star: true, distinct: false, orderBy: [] };
    },
    functionArgs_distinct(_d, exprs, order) {
      return { args: exprs.ir(), star: false, distinct: true, orderBy: orderBy(order) };
    },
    // ALL is the default quantifier (SQL's `<set quantifier>`): `count(ALL x)` is `count(x)`.
    functionArgs_all(_a, exprs, order) {
      return { args: exprs.ir(), star: false, distinct: false, orderBy: orderBy(order) };
    },
    functionArgs_plain(exprs, order) {
      return { args: opt<Expr[]>(exprs) ?? [], star: false, distinct: false, orderBy: orderBy(order) };
    },
    filterClause(_f, _o, _w, e, _c) {
      return e.ir();
    },
    overClause_spec(_over, _o, spec, _c) {
      return spec.ir();
    },
    overClause_named(_over, name) {
      return make('WindowSpec', span(name), { base: name.ir() as Ident, partitionBy: [], orderBy: [], frame: undefined });
    },
    literal(x) {
      switch (x.ctorName) {
        case 'kw_true':
          return make('BooleanLiteral', span(this), { value: true });
        case 'kw_false':
          return make('BooleanLiteral', span(this), { value: false });
        case 'kw_null':
          return make('NullLiteral', span(this), {});
        default:
          return x.ir();
      }
    },
    number(_n) {
      return make('NumberLiteral', span(this), { text: text(this) });
    },
    stringLit(_s) {
      return make('StringLiteral', span(this), { value: str(this) });
    },
    ident(_x) {
      return identOf(this);
    },
    anyWord(_x) {
      return identOf(this);
    },
    // The bare word `default` as a name is the catalog `default`: kept as a quoted identifier, so
    // printing it (to DuckDB or back to Floe SQL) quotes the reserved word and re-reads the same.
    catalogOrSchema_defaultCatalog(kw) {
      return qualifiedName([{ ...identOf(kw), name: 'default', quoted: true }], span(this));
    },
    namesHead_defaultCatalog(kw, _dot) {
      return { ...identOf(kw), name: 'default', quoted: true };
    },
    names(first, _dots, rest) {
      return qualifiedName(list<Ident>(first, rest), span(this));
    },
    identList(first, _c, rest) {
      return list<Ident>(first, rest);
    },

    // ------------------------------------------------------------ types
    dataType(base, suffixes) {
      let t = base.ir() as DataType;
      for (const s of suffixes.children) t = make('ListType', spanFrom(t.span, span(s)), { element: t });
      return t;
    },
    baseType_structAngle(_s, _o, first, _c, rest, _cl) {
      return make('StructType', span(this), { fields: list(first, rest) });
    },
    baseType_structParen(_s, _o, first, _c, rest, _cl) {
      return make('StructType', span(this), { fields: list(first, rest) });
    },
    baseType_list(_l, _o, el, _c) {
      return make('ListType', span(this), { element: el.ir() as DataType });
    },
    baseType_mapAngle(_m, _o, k, _comma, v, _c) {
      return make('MapType', span(this), { key: k.ir() as DataType, value: v.ir() as DataType });
    },
    baseType_mapParen(_m, _o, k, _comma, v, _c) {
      return make('MapType', span(this), { key: k.ir() as DataType, value: v.ir() as DataType });
    },
    baseType_decimalPS(_d, _o, p, _comma, s, _c) {
      return make('DecimalType', span(this), { precision: int(p), scale: int(s) });
    },
    baseType_decimalP(_d, _o, p, _c) {
      return make('DecimalType', span(this), { precision: int(p), scale: 0 });
    },
    baseType_decimal(_d) {
      return make('DecimalType', span(this), { precision: undefined, scale: undefined });
    },
    baseType_fixed(_f, _o, n, _c) {
      return make('FixedType', span(this), { length: int(n) });
    },
    baseType_timestampWithZone(_a, _b, _c, _d) {
      return make('PrimitiveType', span(this), { name: 'timestamptz' });
    },
    baseType_timestampWithoutZone(_a, _b, _c, _d) {
      return make('PrimitiveType', span(this), { name: 'timestamp' });
    },
    baseType_doublePrecision(_a, _b) {
      return make('PrimitiveType', span(this), { name: 'double' });
    },
    baseType_charVaryingN(_a, _b, _o, _n, _c) {
      return make('PrimitiveType', span(this), { name: 'string' });
    },
    baseType_charVarying(_a, _b) {
      return make('PrimitiveType', span(this), { name: 'string' });
    },
    baseType_varcharN(_a, _o, _n, _c) {
      return make('PrimitiveType', span(this), { name: 'string' });
    },
    baseType_simple(t) {
      return make('PrimitiveType', span(this), { name: PRIMITIVE_TYPES[word(t)]! });
    },
    structFieldColon(name, _colon, type, notNull, comment) {
      return make('StructField', span(this), { name: name.ir() as Ident, type: type.ir() as DataType, notNull: has(notNull), comment: opt<string>(comment) });
    },
    structFieldSpace(name, type) {
      return make('StructField', span(this), { name: name.ir() as Ident, type: type.ir() as DataType, notNull: false, comment: undefined });
    },
    columnComment(_c, s) {
      return str(s);
    },

    // ------------------------------------------------------------ DML
    insert(_i, _into, table, cols, source) {
      return make('Insert', span(this), { table: table.ir() as QualifiedName, columns: opt<Ident[]>(cols) ?? [], source: source.ir() as Relation | undefined });
    },
    insertSource_default(_d, _v) {
      return undefined;
    },
    insertSource_query(q) {
      return q.ir();
    },
    update(_u, table, alias, _set, first, _c, rest, from, where) {
      return make('Update', span(this), {
        table: table.ir() as QualifiedName,
        alias: opt<Ident>(alias),
        assignments: list<Assignment>(first, rest),
        from: opt<Relation>(from),
        where: opt<Expr>(where),
      });
    },
    updateAlias(_as, name) {
      return name.ir();
    },
    assignment(col, _eq, value) {
      return make('Assignment', span(this), { column: (col.ir() as QualifiedName).parts, value: value.ir() as Expr | undefined });
    },
    assignValue_default(_d) {
      return undefined;
    },
    assignValue_expr(e) {
      return e.ir();
    },
    delete(_d, _f, table, alias, using, where) {
      return make('Delete', span(this), { table: table.ir() as QualifiedName, alias: opt<Ident>(alias), using: opt<Relation>(using), where: opt<Expr>(where) });
    },
    deleteUsing(_u, first, _c, rest) {
      const tables = list<Relation>(first, rest);
      let rel = tables[0]!;
      for (const right of tables.slice(1)) {
        rel = make('Join', spanFrom(rel.span, right.span), { joinType: 'CROSS', natural: false, implicit: true, left: rel, right, condition: undefined });
      }
      return rel;
    },
    targetAlias(_as, name) {
      return name.ir();
    },
    merge(_m, _i, target, alias, _u, source, _on, on, whens) {
      return make('Merge', span(this), {
        target: target.ir() as QualifiedName,
        alias: opt<Ident>(alias),
        source: source.ir() as Relation,
        on: on.ir() as Expr,
        clauses: all<MergeClause>(whens),
      });
    },
    mergeWhen_matched(_w, _m, cond, _t, action) {
      return make('MergeClause', span(this), { matched: true, condition: opt<Expr>(cond), action: action.ir() as never });
    },
    mergeWhen_notMatched(_w, _n, _m, _by, cond, _t, action) {
      return make('MergeClause', span(this), { matched: false, condition: opt<Expr>(cond), action: action.ir() as never });
    },
    mergeCondition(_and, e) {
      return e.ir();
    },
    mergeMatchedAction_update(_u, _s, first, _c, rest) {
      return make('MergeUpdate', span(this), { assignments: list(first, rest) });
    },
    mergeMatchedAction_delete(_d) {
      return make('MergeDelete', span(this), {});
    },
    mergeMatchedAction_nothing(_d, _n) {
      return make('MergeDoNothing', span(this), {});
    },
    mergeNotMatchedAction_insert(_i, cols, _v, _o, first, _c, rest, _cl) {
      return make('MergeInsert', span(this), { columns: opt<Ident[]>(cols) ?? [], values: list<Expr | undefined>(first, rest) });
    },
    mergeNotMatchedAction_nothing(_d, _n) {
      return make('MergeDoNothing', span(this), {});
    },
    copyInto(_c, _i, table, cols, _from, source, options) {
      const seen = uniqueClauses(options.children, 'copyOption_');
      const word = <T extends string>(clause: string, allowed: readonly T[]): T | undefined => {
        const node = seen.get(clause);
        if (node === undefined) return undefined;
        const w = (node.ir() as string).toUpperCase();
        const parts = caseOf(node).children;
        if (!(allowed as readonly string[]).includes(w)) fail(parts[parts.length - 1]!, allowed.join(' or '), `unknown ${text(parts[0]!).toUpperCase()} value`);
        return w as T;
      };
      return make('CopyInto', span(this), {
        table: table.ir() as QualifiedName, columns: opt<Ident[]>(cols) ?? [], source: source.ir() as never,
        fileFormat: seen.get('fileFormat')?.ir() as OptionEntry[] | undefined,
        pattern: seen.get('pattern')?.ir() as string | undefined,
        files: seen.get('files')?.ir() as string[] | undefined,
        onError: word<CopyOnError>('onError', ['ABORT_STATEMENT', 'CONTINUE', 'SKIP_FILE']),
        purge: (seen.get('purge')?.ir() as boolean | undefined) ?? false,
        force: (seen.get('force')?.ir() as boolean | undefined) ?? false,
        validationMode: word<'RETURN_ERRORS'>('validationMode', ['RETURN_ERRORS']),
        matchByColumnName: word<CopyMatchByColumnName>('matchByColumnName', ['CASE_SENSITIVE', 'CASE_INSENSITIVE', 'NONE']),
      });
    },
    copyOption_files(_kw, _eq, _o, first, _c, rest, _cl) {
      return [str(first), ...rest.children.map((r) => str(r))];
    },
    copyOption_onError(_kw, _eq, w) {
      return (w.ir() as Ident).name;
    },
    copyOption_purge(_kw, _eq, b) {
      return b.ir();
    },
    copyOption_force(_kw, _eq, b) {
      return b.ir();
    },
    copyOption_validationMode(_kw, _eq, w) {
      return (w.ir() as Ident).name;
    },
    copyOption_matchByColumnName(_kw, _eq, w) {
      return (w.ir() as Ident).name;
    },
    booleanWord_true(_) {
      return true;
    },
    booleanWord_false(_) {
      return false;
    },
    listStage(_l, ref, pattern) {
      return make('ListStage', span(this), { path: text(ref).slice(1), pattern: opt<string>(pattern) });
    },
    removeStage(_r, ref, pattern) {
      return make('RemoveStage', span(this), { path: text(ref).slice(1), pattern: opt<string>(pattern) });
    },
    stagePattern(_p, _eq, s) {
      return str(s);
    },
    stageOption_url(_k, _eq, v) {
      return str(v);
    },
    stageOption_fileFormat(_kw, _eq, _o, opts, _c) {
      return all<OptionEntry>(opts).map((e) => ({ ...e, key: e.key.toUpperCase() }));
    },
    stageOption_comment(_k, _eq, v) {
      return str(v);
    },
    granteeKind(k) {
      return text(k).toUpperCase();
    },
    create_stage(_c, _s, ifne, name, options) {
      const seen = uniqueClauses(options.children, 'stageOption_');
      return make('CreateStage', span(this), {
        ifNotExists: has(ifne), name: name.ir() as Ident,
        url: seen.get('url')?.ir() as string | undefined,
        fileFormat: seen.get('fileFormat')?.ir() as OptionEntry[] | undefined,
        comment: seen.get('comment')?.ir() as string | undefined,
      });
    },
    drop_stage(_d, _s, ife, name) {
      return make('DropStage', span(this), { ifExists: has(ife), name: name.ir() as Ident });
    },
    show_stages(_s, _st, like) {
      return make('ShowStages', span(this), { like: opt<string>(like) });
    },
    grant_stage(_g, _u, _o, _s, stage, _to, kind, grantee) {
      return make('GrantStage', span(this), { stage: stage.ir() as Ident, granteeKind: kind.ir() as StageGranteeKind, grantee: grantee.ir() as Ident });
    },
    revoke_stage(_r, _u, _o, _s, stage, _from, kind, grantee) {
      return make('RevokeStage', span(this), { stage: stage.ir() as Ident, granteeKind: kind.ir() as StageGranteeKind, grantee: grantee.ir() as Ident });
    },
    copySource_stage(s) {
      return make('Stage', span(this), { path: text(s).slice(1) });
    },
    copySource_select(_o, _select, first, _c, rest, _from, ref, params, alias, _cl) {
      const given = params.children.flatMap((x) => [x.children[1]!, ...x.children[3]!.children]);
      const seen = new Map<string, OhmNode>();
      for (const p of given) {
        const kind = caseOf(p).ctorName;
        const clause = kind === 'copyStageParam_pattern' ? 'PATTERN' : 'FILE_FORMAT';
        if (seen.has(clause)) fail(p, 'another parameter', `duplicate ${clause} parameter`);
        seen.set(clause, p);
      }
      const ff = seen.get('FILE_FORMAT');
      const named = ff !== undefined && caseOf(ff).ctorName === 'copyStageParam_namedFormat';
      return make('StageQuery', span(this), {
        items: [first, ...rest.children].map((n) => n.ir() as SelectExpr), path: text(ref).slice(1),
        fileFormat: ff === undefined || named ? undefined : ff.ir() as OptionEntry[],
        namedFormat: named ? ff.ir() as string : undefined,
        pattern: seen.get('PATTERN')?.ir() as string | undefined,
        alias: opt<Ident>(alias),
      });
    },
    copySelectItem(e, _as, alias) {
      return make('SelectExpr', span(this), { expr: e.ir() as Expr, alias: opt<Ident>(alias) });
    },
    copyStageParam_fileFormat(_kw, _eq, _gt, _o, opts, _c) {
      return all<OptionEntry>(opts).map((e) => ({ ...e, key: e.key.toUpperCase() }));
    },
    copyStageParam_namedFormat(_kw, _eq, _gt, s) {
      return str(s);
    },
    copyStageParam_pattern(_kw, _eq, _gt, s) {
      return str(s);
    },
    copySourceAlias(_as, id) {
      return id.ir();
    },
    positionalColumn(_t) {
      // `$1` is the column named "$1" of the relation COPY reads a file as (engine/stages/copy-transform.ts).
      return make('ColumnRef', span(this), { parts: [mkIdent(text(this), span(this), true)] });
    },
    copySource_location(s) {
      return make('Location', span(this), { url: str(s) });
    },
    copyOption_fileFormat(_kw, _eq, _o, opts, _c) {
      return all<OptionEntry>(opts).map((e) => ({ ...e, key: e.key.toUpperCase() }));
    },
    copyOption_pattern(_kw, _eq, s) {
      return str(s);
    },
    formatOption(key, _eq, value, _comma) {
      return make('OptionEntry', span(this), { key: (key.ir() as Ident).name, value: value.ir() as OptionValue });
    },
    optionValue_string(s) {
      return str(s);
    },
    optionValue_number(n) {
      return Number(text(n).replace(/\s+/g, ''));
    },
    optionValue_true(_) {
      return true;
    },
    optionValue_false(_) {
      return false;
    },
    optionValue_word(w) {
      return (w.ir() as Ident).name;
    },

    // ------------------------------------------------------------ DDL
    create_schema(_c, _kind, ifne, name, props) {
      return make('CreateSchema', span(this), { ifNotExists: has(ifne), name: name.ir() as QualifiedName, properties: opt<OptionEntry[]>(props) ?? [] });
    },
    create_table(_c, orReplace, _t, ifne, name, _o, first, _comma, rest, _cl, clauses) {
      const columns: ColumnDef[] = [];
      const refused: RefusedConstraint[] = [];
      let primaryKey: readonly Ident[] | undefined;
      for (const e of [first, ...rest.children]) {
        const element = e.ir() as ColumnDef | RefusedConstraint | TablePrimaryKey;
        if (element.kind === 'ColumnDef') columns.push(element);
        else if (element.kind === 'RefusedConstraint') refused.push(element);
        else if (primaryKey !== undefined) fail(e, 'at most one PRIMARY KEY table constraint');
        else primaryKey = element.columns;
      }
      return make('CreateTable', span(this), {
        orReplace: has(orReplace), ifNotExists: has(ifne), name: name.ir() as QualifiedName, columns, primaryKey, refused, ...tableOptions(clauses.children),
      });
    },
    create_index(_c, unique, _i, concurrently, ifne, name, _on, table, definition) {
      return make('CreateIndex', span(this), {
        unique: has(unique), concurrently: has(concurrently), ifNotExists: has(ifne), name: opt<Ident>(name),
        table: table.ir() as QualifiedName, definition: text(definition),
      });
    },
    create_tableAs(_c, orReplace, _t, ifne, name, cols, clauses, _as, query) {
      return make('CreateTableAs', span(this), {
        orReplace: has(orReplace), ifNotExists: has(ifne), name: name.ir() as QualifiedName, columnNames: opt<Ident[]>(cols) ?? [],
        ...tableOptions(clauses.children), query: query.ir() as Relation,
      });
    },
    create_view(_c, orReplace, _v, ifne, name, cols, comment, _as, query) {
      return make('CreateView', span(this), {
        orReplace: has(orReplace), ifNotExists: has(ifne), name: name.ir() as QualifiedName, columnNames: opt<Ident[]>(cols) ?? [],
        comment: opt<string>(comment), query: query.ir() as Relation,
      });
    },
    create_user(_c, _u, ifne, name, options) {
      const opts = userOptions(options.children, true);
      if (opts.email === undefined) fail(this, 'an EMAIL clause', 'CREATE USER requires EMAIL');
      return make('CreateUser', span(this), { ifNotExists: has(ifne), name: name.ir() as Ident, options: opts as UserOptions & { email: string } });
    },
    create_serviceAccount(_c, _s, _a, ifne, name, options) {
      const seen = uniqueClauses(options.children, 'serviceAccountOption_');
      return make('CreateServiceAccount', span(this), {
        ifNotExists: has(ifne), name: name.ir() as Ident,
        defaultRole: seen.get('defaultRole')?.ir() as string | undefined,
        comment: seen.get('comment')?.ir() as string | undefined,
      });
    },
    create_pat(_c, _p, _a, _t, name, options) {
      const seen = uniqueClauses(options.children, 'patOption_');
      return make('CreatePat', span(this), {
        name: name.ir() as Ident,
        forUser: seen.get('for')?.ir() as Ident | undefined,
        ttl: seen.get('ttl')?.ir() as string | undefined,
        scope: seen.get('scope')?.ir() as string | undefined,
      });
    },
    create_webhook(_c, _w, ifne, name, options) {
      const seen = uniqueClauses(options.children, 'webhookOption_');
      const url = seen.get('url');
      const sec = seen.get('secret');
      if (url === undefined) fail(this, 'a URL clause', 'CREATE WEBHOOK requires URL');
      if (sec === undefined) fail(this, 'a SECRET clause', 'CREATE WEBHOOK requires SECRET');
      return make('CreateWebhook', span(this), {
        ifNotExists: has(ifne), name: name.ir() as Ident, url: url!.ir() as string, secret: sec!.ir() as string,
        events: seen.get('events')?.ir() as string[] | undefined,
      });
    },
    create_role(_c, _r, ifne, name) {
      return make('CreateRole', span(this), { ifNotExists: has(ifne), name: name.ir() as Ident });
    },
    viewComment(_c, _eq, s) {
      return str(s);
    },
    columnDef(name, type, constraints) {
      return make('ColumnDef', span(this), { name: name.ir() as Ident, type: type.ir() as DataType, ...columnConstraints(constraints.children) });
    },
    columnConstraint_comment(_c, s) {
      return str(s);
    },
    columnConstraint_refused(_name, constraint, _attributes) {
      return make('RefusedConstraint', span(this), { constraint: refusedKind(caseOf(constraint)), sql: text(this) });
    },
    tableConstraint(_name, body, _attributes) {
      const c = caseOf(body);
      if (c.ctorName === 'tableConstraintBody_primaryKey') return { kind: 'TablePrimaryKey', columns: c.children[2]!.ir() as Ident[] } satisfies TablePrimaryKey;
      return make('RefusedConstraint', span(this), { constraint: refusedKind(c), sql: text(this) });
    },
    tableClause_partitioned(_p, _b, _o, first, _c, rest, _cl) {
      return list(first, rest);
    },
    tableClause_comment(_c, _eq, s) {
      return str(s);
    },
    tableClause_location(_l, _eq, s) {
      return str(s);
    },
    tableClause_using(_u, name) {
      return (name.ir() as Ident).name.toLowerCase();
    },
    tableClause_properties(p) {
      return p.ir();
    },
    propertiesClause(_kw, _o, first, _c, rest, _cl) {
      return properties(first, rest);
    },
    property(key, _eq, value) {
      return make('OptionEntry', span(this), { key: key.ir() as string, value: value.ir() as OptionValue });
    },
    propertyKey_string(s) {
      return str(s);
    },
    propertyKey_name(first, _dots, rest) {
      return list<Ident>(first, rest).map((i) => i.name).join('.');
    },
    partitionField_param(kw, _o, n, _c, col, _cl) {
      return make('PartitionField', span(this), { transform: TRANSFORMS[word(kw)]!, column: col.ir() as Ident, parameter: int(n) });
    },
    partitionField_transform(kw, _o, col, _c) {
      return make('PartitionField', span(this), { transform: TRANSFORMS[word(kw)]!, column: col.ir() as Ident, parameter: undefined });
    },
    partitionField_identity(col) {
      return make('PartitionField', span(this), { transform: 'identity', column: col.ir() as Ident, parameter: undefined });
    },
    drop_schema(_d, _k, ife, name, behavior) {
      return make('DropSchema', span(this), { ifExists: has(ife), name: name.ir() as QualifiedName, cascade: has(behavior) && word(behavior) === 'cascade' });
    },
    drop_table(_d, _t, ife, name, purge) {
      return make('DropTable', span(this), { ifExists: has(ife), name: name.ir() as QualifiedName, purge: has(purge) });
    },
    drop_view(_d, _v, ife, name) {
      return make('DropView', span(this), { ifExists: has(ife), name: name.ir() as QualifiedName });
    },
    drop_user(_d, _u, ife, name, behavior) {
      return make('DropUser', span(this), { ifExists: has(ife), name: name.ir() as Ident, cascade: has(behavior) && word(behavior) === 'cascade' });
    },
    drop_serviceAccount(_d, _s, _a, ife, name) {
      return make('DropServiceAccount', span(this), { ifExists: has(ife), name: name.ir() as Ident });
    },
    drop_pat(_d, _p, _a, _t, ife, name, forUser) {
      return make('DropPat', span(this), { ifExists: has(ife), name: name.ir() as Ident, forUser: opt<Ident>(forUser) });
    },
    drop_webhook(_d, _w, ife, name) {
      return make('DropWebhook', span(this), { ifExists: has(ife), name: name.ir() as Ident });
    },
    drop_role(_d, _r, ife, name) {
      return make('DropRole', span(this), { ifExists: has(ife), name: name.ir() as Ident });
    },
    drop_index(_d, _i, concurrently, ife, name, behavior) {
      return make('DropIndex', span(this), { concurrently: has(concurrently), ifExists: has(ife), name: name.ir() as QualifiedName, cascade: has(behavior) && word(behavior) === 'cascade' });
    },
    alter_table(_a, _t, ife, name, action) {
      return make('AlterTable', span(this), { ifExists: has(ife), name: name.ir() as QualifiedName, action: action.ir() as AlterTableAction });
    },
    alter_self(_a, _u, _self, action) {
      return { ...(action.ir() as Statement), span: span(this) };
    },
    alter_user(_a, _u, name, action) {
      const n = name.ir() as Ident;
      const s = span(this);
      const a = caseOf(action);
      switch (a.ctorName) {
        case 'alterUserAction_setLegalHold':
          return make('AlterUserSetLegalHold', s, { name: n, reason: a.ir() as string });
        case 'alterUserAction_clearLegalHold':
          return make('AlterUserClearLegalHold', s, { name: n });
        case 'alterUserAction_set':
          return make('AlterUserSet', s, { name: n, options: a.ir() as UserOptions });
        case 'alterUserAction_unset':
          return make('AlterUserUnset', s, { name: n, fields: a.ir() as UserField[] });
        case 'alterUserAction_suspend':
          return make('AlterUserSuspend', s, { name: n });
        case 'alterUserAction_unsuspend':
          return make('AlterUserUnsuspend', s, { name: n });
        case 'alterUserAction_unlock':
          return make('AlterUserUnlock', s, { name: n });
        default:
          return make('AlterUserRename', s, { name: n, newName: a.ir() as Ident });
      }
    },
    alter_serviceAccount(_a, _s, _acc, name, action) {
      const n = name.ir() as Ident;
      const s = span(this);
      const a = caseOf(action);
      if (a.ctorName === 'serviceAccountAction_dropKeypair') {
        const [, , ife, , , kid] = a.children as OhmNode[];
        return make('DropKeypair', s, { account: n, ifExists: has(ife!), keyId: str(kid!) });
      }
      const seen = uniqueClauses(a.children[2]!.children, 'keypairOption_');
      const keyId = seen.get('keyId');
      const publicKey = seen.get('publicKey');
      if (keyId === undefined) fail(this, 'a KEY_ID clause', 'ADD KEYPAIR requires KEY_ID');
      if (publicKey === undefined) fail(this, 'a PUBLIC_KEY clause', 'ADD KEYPAIR requires PUBLIC_KEY');
      return make('AddKeypair', s, {
        account: n, keyId: keyId!.ir() as string, publicKey: publicKey!.ir() as string,
        algorithm: seen.get('algorithm')?.ir() as KeyAlgorithm | undefined,
      });
    },
    alterTableAction_addColumn(_add, _col, ifne, path, type, constraints) {
      return make('AddColumn', span(this), { ifNotExists: has(ifne), path: (path.ir() as QualifiedName).parts, type: type.ir() as DataType, ...columnConstraints(constraints.children) });
    },
    alterTableAction_dropColumn(_d, _c, ife, path) {
      return make('DropColumn', span(this), { ifExists: has(ife), path: (path.ir() as QualifiedName).parts });
    },
    alterTableAction_renameColumn(_r, _c, path, _to, name) {
      return make('RenameColumn', span(this), { path: (path.ir() as QualifiedName).parts, newName: name.ir() as Ident });
    },
    alterTableAction_renameTable(_r, _to, name) {
      return make('RenameTable', span(this), { newName: name.ir() as QualifiedName });
    },
    alterTableAction_alterType(_a, _c, path, _sd, _t, type) {
      return make('AlterColumnType', span(this), { path: (path.ir() as QualifiedName).parts, type: type.ir() as DataType });
    },
    alterTableAction_dropNotNull(_a, _c, path, _d, _n, _nu) {
      return make('DropNotNull', span(this), { path: (path.ir() as QualifiedName).parts });
    },
    alterTableAction_setProperties(_s, _k, _o, first, _c, rest, _cl) {
      return make('SetProperties', span(this), { properties: properties(first, rest) });
    },
    alterTableAction_unsetProperties(_u, _k, ife, _o, first, _c, rest, _cl) {
      return make('UnsetProperties', span(this), { ifExists: has(ife), keys: list<string>(first, rest) });
    },

    // ------------------------------------------------------------ principals
    userOption_email(_k, _eq, v) {
      return str(v);
    },
    userOption_password(_k, _eq, v) {
      return secret(v);
    },
    userOption_displayName(_k, _eq, v) {
      return str(v);
    },
    userOption_defaultRole(_k, _eq, v) {
      return nameValue(v);
    },
    userOption_defaultWarehouse(_k, _eq, v) {
      return nameValue(v);
    },
    userOption_mustChangePassword(_k, _eq, v) {
      return word(v) === 'true';
    },
    userOption_comment(_k, _eq, v) {
      return str(v);
    },
    userOption_identitySource(_k, _eq, v) {
      return nameValue(v);
    },
    nameValue_string(s) {
      return str(s);
    },
    nameValue_ident(i) {
      return i.ir();
    },
    userField(f) {
      return word(f) as UserField;
    },
    alterSelfAction_password(_s, _p, _eq, newPw, _old, _p2, _eq2, oldPw) {
      return make('AlterSelfPassword', span(this), { newPassword: secret(newPw), oldPassword: secret(oldPw) });
    },
    alterSelfAction_enroll(_e, _m, _t) {
      return make('AlterSelfEnrollMfa', span(this), { method: 'TOTP' });
    },
    alterSelfAction_verify(_v, _m, _t, _eq, code) {
      return make('AlterSelfVerifyMfa', span(this), { method: 'TOTP', code: secret(code) });
    },
    alterSelfAction_disable(_d, _m, _w, _t, _c, _eq, code) {
      return make('AlterSelfDisableMfa', span(this), { method: 'TOTP', code: secret(code) });
    },
    alterUserAction_setLegalHold(_s, _l, _h, _r, _eq, reason) {
      return str(reason);
    },
    alterUserAction_set(_s, options) {
      return userOptions(options.children, false);
    },
    alterUserAction_unset(_u, first, _c, rest) {
      const fields = list<UserField>(first, rest);
      if (new Set(fields).size !== fields.length) fail(this, 'distinct column names', 'duplicate column in UNSET');
      return fields;
    },
    alterUserAction_rename(_r, _to, name) {
      return name.ir();
    },
    serviceAccountOption_defaultRole(_k, _eq, v) {
      return nameValue(v);
    },
    serviceAccountOption_comment(_k, _eq, v) {
      return str(v);
    },
    keypairOption_keyId(_k, _eq, v) {
      return str(v);
    },
    keypairOption_publicKey(_k, _eq, v) {
      return str(v);
    },
    keypairOption_algorithm(_k, _eq, v) {
      const a = nameValue(v).toUpperCase();
      if (!ALGORITHMS.has(a)) fail(v, 'RS256, RS512, ES256 or ES384');
      return a;
    },
    patOption_for(f) {
      return f.ir();
    },
    patOption_ttl(_k, _eq, v) {
      return str(v);
    },
    patOption_scope(_k, _eq, v) {
      return str(v);
    },
    forUser(_f, _eq, name) {
      return name.ir();
    },
    webhookOption_url(_k, _eq, v) {
      return str(v);
    },
    webhookOption_secret(_k, _eq, v) {
      return secret(v);
    },
    webhookOption_events(_k, _eq, _o, first, _c, rest, _cl) {
      return [str(first), ...rest.children.map((r) => str(r))];
    },
    grant_role(_g, _r, role, _to, _u, user) {
      return make('GrantRole', span(this), { role: role.ir() as Ident, user: user.ir() as Ident });
    },
    grant_manage(_g, first, _c, rest, _to, _u, user) {
      return make('GrantManage', span(this), { privileges: list<ManagePrivilege>(first, rest), user: user.ir() as Ident });
    },
    revoke_role(_r, _ro, role, _from, _u, user) {
      return make('RevokeRole', span(this), { role: role.ir() as Ident, user: user.ir() as Ident });
    },
    revoke_manage(_r, first, _c, rest, _from, _u, user) {
      return make('RevokeManage', span(this), { privileges: list<ManagePrivilege>(first, rest), user: user.ir() as Ident });
    },
    managePrivilege_users(_m, _u) {
      return 'USERS';
    },
    managePrivilege_pats(_m, _p) {
      return 'PATS';
    },
    managePrivilege_serviceAccounts(_m, _s, _a) {
      return 'SERVICE ACCOUNTS';
    },
    undropUser(_u, _user, name) {
      return make('UndropUser', span(this), { name: name.ir() as Ident });
    },
    expungeUser(_e, _u, name, _r, _eq, reason) {
      return make('ExpungeUser', span(this), { name: name.ir() as Ident, reason: str(reason) });
    },
    redeemInvitation(_r, _i, _eq, token, _w, _p, _eq2, password) {
      return make('RedeemInvitation', span(this), { token: secret(token), password: secret(password) });
    },

    // ------------------------------------------------------------ SHOW, DESCRIBE, USE, SET
    show_queryHistory(_s, _q, _h, limit) {
      return make('ShowQueryHistory', span(this), { limit: opt<number>(limit) });
    },
    show_resourceGroups(_s, _r, _g) {
      return make('ShowResourceGroups', span(this), {});
    },
    show_users(_s, _u, like, status) {
      return make('ShowUsers', span(this), { like: opt<string>(like), status: opt<PrincipalStatus>(status) });
    },
    show_serviceAccounts(_s, _sv, _a) {
      return make('ShowServiceAccounts', span(this), {});
    },
    show_pats(_s, _p, _a, _t, forUser) {
      return make('ShowPats', span(this), { forUser: opt<Ident>(forUser) });
    },
    show_webhooks(_s, _w) {
      return make('ShowWebhooks', span(this), {});
    },
    show_catalogs(_s, _c, like) {
      return make('ShowCatalogs', span(this), { like: opt<string>(like) });
    },
    show_schemas(_s, _k, inIter, like) {
      return make('ShowSchemas', span(this), { in: opt<QualifiedName>(inIter), like: opt<string>(like) });
    },
    show_tables(_s, _t, inIter, like) {
      return make('ShowTables', span(this), { in: opt<QualifiedName>(inIter), like: opt<string>(like) });
    },
    show_views(_s, _v, inIter, like) {
      return make('ShowViews', span(this), { in: opt<QualifiedName>(inIter), like: opt<string>(like) });
    },
    showLimit(_l, _eq, n) {
      return int(n);
    },
    showLike(_l, _eq, s) {
      return str(s);
    },
    showStatus(_w, _s, _eq, v) {
      const status = nameValue(v).toUpperCase();
      if (!STATUSES.has(status)) fail(v, 'ACTIVE, INVITED, SUSPENDED, DEACTIVATED, PROVISIONED or LOCKED');
      return status;
    },
    showIn(_k, name) {
      return name.ir();
    },
    describe_user(_d, _u, name) {
      return make('DescribeUser', span(this), { name: name.ir() as Ident });
    },
    describe_table(_d, _t, name) {
      return make('DescribeTable', span(this), { name: name.ir() as QualifiedName });
    },
    describe_tableShort(_d, name) {
      return make('DescribeTable', span(this), { name: name.ir() as QualifiedName });
    },
    use(_u, name) {
      return make('Use', span(this), { name: name.ir() as QualifiedName });
    },
    setStatement(_s, _session, name, _assign, value) {
      const n = (name.ir() as QualifiedName).parts.map((p) => p.name.toLowerCase()).join('.');
      const v = value.ir() as OptionValue | undefined;
      if (n === 'svc.workload_class') {
        // SET … = DEFAULT drops the override, exactly as RESET does.
        if (v === undefined) return make('ResetSession', span(this), { name: n });
        const cls = typeof v === 'string' ? v.toLowerCase() : '';
        if (!WORKLOAD_CLASSES.has(cls)) fail(value, "'interactive', 'medium' or 'batch'");
        return make('SetWorkloadClass', span(this), { workloadClass: cls as WorkloadClass });
      }
      return make('SetSession', span(this), { name: n, value: v });
    },
    settingValue_default(_d) {
      return undefined;
    },
    settingValue_value(v) {
      return v.ir();
    },
    resetStatement_all(_r, _a) {
      return make('ResetSession', span(this), { name: undefined });
    },
    resetStatement_name(_r, name) {
      return make('ResetSession', span(this), { name: (name.ir() as QualifiedName).parts.map((p) => p.name.toLowerCase()).join('.') });
    },
  };

  const tableOptions = (clauses: readonly OhmNode[]) => {
    let partitionBy: PartitionField[] = [];
    let props: OptionEntry[] = [];
    let comment: string | undefined;
    let location: string | undefined;
    let using: string | undefined;
    const seen = new Set<string>();
    for (const c of clauses) {
      const kind = caseOf(c).ctorName;
      if (seen.has(kind)) fail(c, 'another clause', 'duplicate table clause');
      seen.add(kind);
      switch (kind) {
        case 'tableClause_partitioned':
          partitionBy = c.ir() as PartitionField[];
          break;
        case 'tableClause_comment':
          comment = c.ir() as string;
          break;
        case 'tableClause_location':
          location = c.ir() as string;
          break;
        case 'tableClause_using':
          using = c.ir() as string;
          break;
        default:
          props = c.ir() as OptionEntry[];
      }
    }
    return { partitionBy, properties: props, comment, location, using };
  };

  void isExpr;
  return actions;
}

/** Registers the actions with Ohm, which checks that every action matches its rule's arity. */
export function checkActions(semantics: SqlSemantics, actions: SqlActionDict<unknown>): SqlSemantics {
  return semantics.addOperation<unknown>('ir', actions);
}

/** The parts of Ohm's CST nodes (MatchResult._cst) the evaluator reads. */
interface RawNode {
  readonly ctorName: string;
  readonly matchLength: number;
  readonly children: readonly RawNode[];
  readonly childOffsets: readonly number[];
  isNonterminal(): boolean;
  isIteration(): boolean;
  isTerminal(): boolean;
}

type Action = (this: unknown, ...children: CstNode[]) => unknown;

/**
 * A CST node as the actions see it: the subset of Ohm's semantic wrapper API they use (ctorName,
 * children, source, sourceString, ir()). Ohm's own wrappers allocate an Interval (with
 * Object.defineProperty) per child, which cost about a third of the parse time.
 */
class CstNode {
  #children: CstNode[] | undefined;
  readonly endIdx: number;
  constructor(
    readonly raw: RawNode,
    readonly startIdx: number,
    private readonly base: number,
    private readonly evaluator: Evaluator,
  ) {
    this.endIdx = startIdx + raw.matchLength;
  }
  get ctorName(): string {
    return this.raw.ctorName;
  }
  get source(): { readonly startIdx: number; readonly endIdx: number } {
    return this;
  }
  get sourceString(): string {
    return this.evaluator.chars.slice(this.startIdx, this.endIdx);
  }
  get children(): CstNode[] {
    if (this.#children === undefined) {
      const r = this.raw;
      const out: CstNode[] = new Array(r.children.length);
      for (let i = 0; i < r.children.length; i++) {
        const c = r.children[i]!;
        const start = this.base + r.childOffsets[i]!;
        out[i] = new CstNode(c, start, c.isNonterminal() ? start : this.base, this.evaluator);
      }
      this.#children = out;
    }
    return this.#children;
  }
  ir(): unknown {
    return this.evaluator.evaluate(this);
  }
}

class Evaluator {
  constructor(
    readonly chars: string,
    private readonly actions: Readonly<Record<string, Action | undefined>>,
  ) {}
  evaluate(n: CstNode): unknown {
    const raw = n.raw;
    if (raw.isIteration()) return this.actions['_iter']!.apply(n, n.children);
    if (raw.isTerminal()) return this.actions['_terminal']!.call(n);
    const action = this.actions[raw.ctorName];
    if (action !== undefined) return action.apply(n, n.children);
    if (raw.children.length === 1) return n.children[0]!.ir();
    throw new Error(`missing semantic action for ${raw.ctorName}`);
  }
}

/** Runs the `ir` actions over a successful match of the token string `chars`. */
export function evaluate(actions: SqlActionDict<unknown>, match: unknown, chars: string): unknown {
  const m = match as { _cst: RawNode; _cstOffset: number };
  const evaluator = new Evaluator(chars, actions as unknown as Record<string, Action | undefined>);
  return new CstNode(m._cst, m._cstOffset, m._cstOffset, evaluator).ir();
}

export type { NonterminalNode, IterationNode };
