/**
 * A compact, span-free printer of the IR for tests and debugging: `(Kind field=value …)`, with
 * identifiers as their names, empty lists, false flags and absent fields left out.
 */
import type { Node } from './ir.js';

export function printIR(node: Node | readonly Node[] | undefined): string {
  return show(node);
}

function show(v: unknown): string {
  if (v === undefined) return '_';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return `[${v.map(show).join(' ')}]`;
  const n = v as { kind?: string; name?: unknown; quoted?: boolean; parts?: unknown[] };
  if (n.kind === 'Ident') return n.quoted ? `"${String(n.name)}"` : String(n.name);
  if (n.kind === 'QualifiedName') return (n.parts as { name: string }[]).map((p) => p.name).join('.');
  const fields: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    if (k === 'kind' || k === 'span' || x === undefined || x === false) continue;
    if (Array.isArray(x) && x.length === 0) continue;
    fields.push(x === true ? k : `${k}=${show(x)}`);
  }
  return n.kind === undefined ? `{${fields.join(' ')}}` : `(${n.kind}${fields.length > 0 ? ' ' + fields.join(' ') : ''})`;
}
