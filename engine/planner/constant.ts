/**
 * Constant queries, answered by the coordinator: a SELECT without FROM whose select list holds only
 * integer and string literals (`SELECT 1`, `SELECT 'ok' AS status`: health checks and connection
 * probes) reads no table and computes nothing, so the plan needs no fragment. Sending it to a
 * DuckDB worker cost four times what the rest of the statement cost (docs/performance.md); as
 * Snowflake's services layer answers such queries without a warehouse, the session answers it from
 * the plan. It is still routed, admitted and recorded like every query (docs/query.md).
 *
 * The answer is exactly DuckDB's for the same text: column names, type names and wire values
 * (tests/engine/planner-constant.test.ts runs both on generated select lists). So the accepted
 * forms are only those whose DuckDB naming and typing are plain:
 * - an unsigned integer literal within INTEGER's range → `INTEGER`, named by its value (`007` → `7`);
 * - a string literal → `VARCHAR`, named by its SQL text (`'it''s'`);
 * - either with an alias, named by the alias as written.
 * Anything else (decimals, signs, booleans, NULL, casts, expressions) goes to a worker.
 *
 * Pure: no I/O.
 */
import type { Relation } from '../../grammar/ir.js';

export interface ConstantResult {
  readonly columns: readonly string[];
  readonly types: readonly string[];
  /** One row, in wire form (INTEGER as a JSON number, VARCHAR as a string). */
  readonly rows: readonly (readonly (number | string)[])[];
}

const INTEGER_MAX = 2 ** 31 - 1;
/** Longest digit string considered (leading zeros included): longer ones go to a worker. */
const MAX_DIGITS = 20;

/** The coordinator's answer to a constant query, or undefined when the query needs a worker. */
export function constantResult(relation: Relation): ConstantResult | undefined {
  if (relation.kind !== 'Project' || relation.input.kind !== 'OneRow' || relation.items.length === 0) return undefined;
  const columns: string[] = [];
  const types: string[] = [];
  const row: (number | string)[] = [];
  for (const item of relation.items) {
    if (item.kind !== 'SelectExpr') return undefined;
    const e = item.expr;
    let name: string;
    switch (e.kind) {
      case 'NumberLiteral': {
        if (e.text.length > MAX_DIGITS || !/^[0-9]+$/.test(e.text)) return undefined;
        const value = Number(e.text);
        if (value > INTEGER_MAX) return undefined;
        row.push(value);
        types.push('INTEGER');
        name = String(value);
        break;
      }
      case 'StringLiteral':
        row.push(e.value);
        types.push('VARCHAR');
        name = `'${e.value.replaceAll("'", "''")}'`;
        break;
      default:
        return undefined;
    }
    columns.push(item.alias?.name ?? name);
  }
  return { columns, types, rows: [row] };
}
