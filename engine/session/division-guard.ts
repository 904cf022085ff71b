/**
 * SQL semantics for division by zero: `x / 0` and `x % 0` are errors (SQLSTATE 22012), as in
 * PostgreSQL and Trino, where DuckDB would answer NULL or Infinity. Every `/` and `%` of a statement
 * gets its divisor guarded before binding: `a / (CASE WHEN b = 0 THEN error('division by zero')
 * ELSE b END)`; the executor maps that error to DIVISION_BY_ZERO. A pure IR → IR copy.
 */
import { make, type Expr, type Statement } from '../../grammar/ir.js';

const DIVISION_BY_ZERO = 'division by zero';

function guard(divisor: Expr): Expr {
  const span = divisor.span;
  const zero = make('NumberLiteral', span, { text: '0' });
  const raise = make('FunctionCall', span, {
    name: make('QualifiedName', span, { parts: [make('Ident', span, { name: 'error', quoted: false })] }),
    args: [make('StringLiteral', span, { value: DIVISION_BY_ZERO })],
    star: false, distinct: false, orderBy: [], filter: undefined, over: undefined,
  });
  return make('Case', span, {
    operand: undefined,
    whens: [make('CaseWhen', span, { when: make('Binary', span, { op: '=', left: divisor, right: zero }), then: raise })],
    else: divisor,
  });
}

/** Deep copy with every node visited; `Binary` divisions get their guard. */
function visit(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(visit);
  if (value === null || typeof value !== 'object') return value;
  const node = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === 'span' ? v : visit(v);
  if (out.kind === 'Binary' && (out.op === '/' || out.op === '%')) out.right = guard(out.right as Expr);
  return out;
}

export function guardDivisions<S extends Statement>(statement: S): S {
  return visit(statement) as S;
}
