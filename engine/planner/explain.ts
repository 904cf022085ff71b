/**
 * EXPLAIN text of a planned query: what each scan reads (snapshot, files kept of all, estimated rows
 * and bytes, columns, pushed predicates), the workload class and its limits, and each fragment's
 * SQL. One line per entry, so the session can answer EXPLAIN as a one-column result.
 */
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { valueToHumanString } from '../../catalog/iceberg/transforms.js';
import { isPrimitive } from '../../catalog/iceberg/types.js';
import type { FragmentPlan } from '../fragments.js';
import { fragmentRelation } from '../fragments.js';
import type { BoundQuery, BoundScan } from './bind.js';
import type { WorkloadClassification } from './classify.js';
import type { PlannedScan } from './fragment.js';
import { formatTableName } from './names.js';
import type { ScanPredicate } from './predicates.js';

function selectorText(s: BoundScan): string {
  const snap = s.snapshot === undefined ? 'no snapshot (empty)' : `snapshot ${s.snapshot.snapshotId}`;
  switch (s.selector.kind) {
    case 'current': return `${snap}, current`;
    case 'snapshot-id': return `${snap}, FOR VERSION AS OF ${s.selector.snapshotId}`;
    case 'ref': return `${snap}, FOR VERSION AS OF '${s.selector.name}'`;
    case 'timestamp': return `${snap}, FOR TIMESTAMP AS OF ${new Date(s.selector.timestampMs).toISOString()}`;
  }
}

function predicateText(s: BoundScan, p: ScanPredicate): string {
  const field = s.schema.fields.find((f) => f.id === p.fieldId);
  const name = field?.name ?? `#${p.fieldId}`;
  const show = (v: IcebergValue): string => (field !== undefined && isPrimitive(field.type) ? valueToHumanString(field.type, v) : String(v));
  switch (p.kind) {
    case 'compare': return `${name} ${p.op} ${show(p.value)}`;
    case 'in': return `${name} IN (${p.values.map(show).join(', ')})`;
    case 'is-null': return `${name} IS ${p.negated ? 'NOT ' : ''}NULL`;
    case 'starts-with': return `${name} LIKE '${p.prefix.replaceAll("'", "''")}%'`;
  }
}

/** The EXPLAIN lines of a plan. */
export function explainPlan(query: BoundQuery, scans: readonly PlannedScan[], classification: WorkloadClassification, plan: FragmentPlan): readonly string[] {
  const lines: string[] = [];
  lines.push(`Workload: ${classification.workloadClass} (${classification.reason}); priority ${classification.priority}, timeout ${classification.timeoutMs / 1000} s, memory cap ${(classification.memoryCapBytes / 1024 ** 3).toFixed(1)} GiB`);
  for (const p of scans) {
    const s = p.scan;
    const cols = s.columns === 'all' ? 'all columns' : s.columns.map((id) => s.schema.fields.find((f) => f.id === id)?.name ?? `#${id}`).join(', ');
    const total = p.tasks.length + p.prunedFiles;
    lines.push(`Scan ${formatTableName(s.table)} (${selectorText(s)}): ${p.tasks.length} of ${total} files, ~${p.estimatedRows} rows, ${p.estimatedBytes} bytes; reads ${cols}${s.predicates.length > 0 ? `; prunes by ${s.predicates.map((x) => predicateText(s, x)).join(' AND ')}` : ''}`);
  }
  for (const s of query.systemScans) lines.push(`System table system.${s.table}`);
  for (const f of plan.fragments) {
    const reads = f.inputs.length > 0 ? ` (reads ${f.inputs.map(fragmentRelation).join(', ')})` : '';
    lines.push(`Fragment ${f.id}${reads}: ${f.sql}`);
  }
  return lines;
}
