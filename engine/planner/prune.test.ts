import t from 'tap';
import fc from 'fast-check';
import { compareValues, toByteBuffer } from '../../catalog/iceberg/conversions.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import type { DataFile } from '../../catalog/iceberg/manifest.js';
import type { PartitionSpec } from '../../catalog/iceberg/partition-spec.js';
import { schema } from '../../catalog/iceberg/schema.js';
import { applyTransform, Transforms } from '../../catalog/iceberg/transforms.js';
import type { Transform } from '../../catalog/iceberg/transforms.js';
import { nestedField, Types } from '../../catalog/iceberg/types.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import type { ComparisonOp } from '../../grammar/index.js';
import type { ScanPredicate } from './predicates.js';
import { fileMayMatch, pruneFiles } from './prune.js';

// Columns: a int, b long, s string, d date, x double.
const TYPES: ReadonlyMap<number, PrimitiveType> = new Map([[1, Types.int], [2, Types.long], [3, Types.string], [4, Types.date], [5, Types.double]]);
const SCHEMA = schema(0, [...TYPES].map(([id, ty]) => nestedField(id, ['a', 'b', 's', 'd', 'x'][id - 1]!, ty)));
type Row = ReadonlyMap<number, IcebergValue | null>;

const PARTITION_CHOICES: readonly { sourceId: number; transform: Transform }[] = [
  { sourceId: 1, transform: Transforms.identity }, { sourceId: 1, transform: Transforms.bucket(4) }, { sourceId: 1, transform: Transforms.truncate(10) },
  { sourceId: 2, transform: Transforms.bucket(3) }, { sourceId: 2, transform: Transforms.truncate(7) }, { sourceId: 2, transform: Transforms.identity },
  { sourceId: 3, transform: Transforms.identity }, { sourceId: 3, transform: Transforms.truncate(1) }, { sourceId: 3, transform: Transforms.truncate(2) }, { sourceId: 3, transform: Transforms.bucket(2) },
  { sourceId: 4, transform: Transforms.year }, { sourceId: 4, transform: Transforms.month }, { sourceId: 4, transform: Transforms.day },
  { sourceId: 5, transform: Transforms.void },
];

const valueArb: Record<number, fc.Arbitrary<IcebergValue>> = {
  1: fc.integer({ min: -40, max: 40 }),
  2: fc.bigInt({ min: -40n, max: 40n }),
  3: fc.constantFrom('', 'a', 'ab', 'abc', 'b', 'ba', 'z', 'é', 'éa', 'zz'),
  4: fc.integer({ min: -800, max: 800 }),
  5: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constant(0.5), fc.constant(Number.NaN), fc.constant(-0)),
};
const rowArb: fc.Arbitrary<Row> = fc
  .tuple(...[1, 2, 3, 4, 5].map((id) => fc.option(valueArb[id]!, { freq: 6, nil: null })))
  .map((vals) => new Map(vals.map((v, i) => [i + 1, v] as const)));

const OPS: readonly ComparisonOp[] = ['=', '<>', '<', '<=', '>', '>='];
const predicateArb: fc.Arbitrary<ScanPredicate> = fc.integer({ min: 1, max: 5 }).chain((fieldId) => {
  const lit = fieldId === 5 ? fc.integer({ min: -6, max: 6 }) : valueArb[fieldId]!;
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constantFrom(...OPS), value: lit }).map(({ op, value }): ScanPredicate => ({ kind: 'compare', fieldId, op, value })) },
    { weight: 2, arbitrary: fc.array(lit, { minLength: 1, maxLength: 3 }).map((values): ScanPredicate => ({ kind: 'in', fieldId, values })) },
    { weight: 1, arbitrary: fc.boolean().map((negated): ScanPredicate => ({ kind: 'is-null', fieldId, negated })) },
    { weight: fieldId === 3 ? 4 : 0, arbitrary: fc.constantFrom('a', 'ab', 'b', 'é', 'z', 'abc', 'ba').map((prefix): ScanPredicate => ({ kind: 'starts-with', fieldId: 3, prefix })) },
  );
});

/** SQL (DuckDB) semantics: NULL never matches a comparison; NaN equals NaN and sorts above every number. */
function rowMatches(row: Row, p: ScanPredicate): boolean {
  const v = row.get(p.fieldId) ?? null;
  const type = TYPES.get(p.fieldId)!;
  if (p.kind === 'is-null') return p.negated ? v !== null : v === null;
  if (v === null) return false;
  const c = (x: IcebergValue): number => compareValues(type, v, x);
  if (p.kind === 'in') return p.values.some((x) => c(x) === 0);
  if (p.kind === 'starts-with') return typeof v === 'string' && v.startsWith(p.prefix);
  const r = c(p.value);
  switch (p.op) {
    case '=': return r === 0;
    case '<>': return r !== 0;
    case '<': return r < 0;
    case '<=': return r <= 0;
    case '>': return r > 0;
    case '>=': return r >= 0;
  }
}

/** Files as a writer makes them: rows grouped by partition tuple, chunked, with metrics (some left out). */
function writeFiles(rows: readonly Row[], spec: PartitionSpec, chunk: number, dropMetrics: readonly number[]): DataFile[] {
  const groups = new Map<string, { tuple: (IcebergValue | null)[]; rows: Row[] }>();
  for (const row of rows) {
    const tuple = spec.fields.map((f) => applyTransform(f.transform, TYPES.get(f.sourceId)!, row.get(f.sourceId) ?? null));
    const k = JSON.stringify(tuple, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
    const g = groups.get(k) ?? { tuple, rows: [] };
    g.rows.push(row);
    groups.set(k, g);
  }
  const files: DataFile[] = [];
  for (const g of groups.values()) {
    for (let i = 0; i < g.rows.length; i += chunk) {
      const part = g.rows.slice(i, i + chunk);
      const lower = new Map<number, Uint8Array>();
      const upper = new Map<number, Uint8Array>();
      const nulls = new Map<number, number>();
      const nans = new Map<number, number>();
      const values = new Map<number, number>();
      for (const [id, type] of TYPES) {
        if (dropMetrics.includes(id)) continue;
        const vs = part.map((r) => r.get(id) ?? null);
        values.set(id, vs.length);
        nulls.set(id, vs.filter((v) => v === null).length);
        if (id === 5) nans.set(id, vs.filter((v) => typeof v === 'number' && Number.isNaN(v)).length);
        const present = vs.filter((v): v is IcebergValue => v !== null && !(typeof v === 'number' && Number.isNaN(v)));
        if (present.length === 0) continue;
        const sorted = [...present].sort((x, y) => compareValues(type, x, y));
        lower.set(id, toByteBuffer(type, sorted[0]!));
        upper.set(id, toByteBuffer(type, sorted[sorted.length - 1]!));
      }
      files.push({
        content: 'data', filePath: `f${files.length}`, fileFormat: 'PARQUET', partition: g.tuple, recordCount: part.length, fileSizeInBytes: part.length,
        valueCounts: values, nullValueCounts: nulls, nanValueCounts: nans, lowerBounds: lower, upperBounds: upper,
        // keep the rows beside the file for the check
        ...({ rows: part } as object),
      });
    }
  }
  return files;
}

t.test('a pruned file never holds a matching row', async (t) => {
  let pruned = 0;
  let kept = 0;
  fc.assert(
    fc.property(
      fc.array(rowArb, { minLength: 1, maxLength: 60 }),
      fc.subarray([...PARTITION_CHOICES.keys()], { maxLength: 3 }),
      fc.integer({ min: 1, max: 6 }),
      fc.subarray([1, 2, 3, 4, 5], { maxLength: 2 }),
      fc.array(predicateArb, { minLength: 1, maxLength: 3 }),
      (rows, specChoice, chunk, dropMetrics, predicates) => {
        const spec: PartitionSpec = { specId: 0, fields: specChoice.map((i, n) => ({ ...PARTITION_CHOICES[i]!, fieldId: 1000 + n, name: `p${n}` })) };
        const files = writeFiles(rows, spec, chunk, dropMetrics);
        const ctx = { schema: SCHEMA, specs: new Map([[0, spec]]) };
        for (const file of files) {
          const fileRows = (file as unknown as { rows: Row[] }).rows;
          for (const set of [predicates, ...predicates.map((p) => [p])]) {
            if (fileMayMatch({ file, specId: 0 }, set, ctx)) {
              kept++;
              continue;
            }
            pruned++;
            const match = fileRows.find((r) => set.every((p) => rowMatches(r, p)));
            if (match !== undefined) throw new Error(`pruned a file with a matching row: ${JSON.stringify([...match], (_, x) => (typeof x === 'bigint' ? `${x}n` : x))} for ${JSON.stringify(set, (_, x) => (typeof x === 'bigint' ? `${x}n` : x))}`);
          }
        }
      },
    ),
    { numRuns: 400 },
  );
  t.ok(pruned > 0 && kept > 0, `pruning happened (${pruned} pruned, ${kept} kept judgements)`);
});

t.test('pruning by bounds and by partition transforms', async (t) => {
  const spec: PartitionSpec = { specId: 1, fields: [{ sourceId: 4, fieldId: 1000, name: 'd_month', transform: Transforms.month }] };
  const ctx = { schema: SCHEMA, specs: new Map([[1, spec]]) };
  const file = (month: number, lo: number, hi: number): DataFile => ({
    content: 'data', filePath: `m${month}`, fileFormat: 'PARQUET', partition: [month], recordCount: 10, fileSizeInBytes: 100,
    lowerBounds: new Map([[1, toByteBuffer(Types.int, lo)]]), upperBounds: new Map([[1, toByteBuffer(Types.int, hi)]]),
  });
  const tasks = [file(0, 0, 9), file(1, 10, 19), file(2, 20, 29)].map((f) => ({ file: f, specId: 1, sequenceNumber: 1, snapshotId: 1n, positionDeletes: [], equalityDeletes: [] }));
  const keep = (ps: ScanPredicate[]): string[] => pruneFiles(tasks, ps, ctx).tasks.map((x) => x.file.filePath);
  t.same(keep([{ kind: 'compare', fieldId: 1, op: '>=', value: 15 }]), ['m1', 'm2'], 'by bounds');
  t.same(keep([{ kind: 'compare', fieldId: 1, op: '<', value: 10 }]), ['m0']);
  t.same(keep([{ kind: 'in', fieldId: 1, values: [3, 25] }]), ['m0', 'm2']);
  // 1970-02-15 is day 45, in month 1.
  t.same(keep([{ kind: 'compare', fieldId: 4, op: '=', value: 45 }]), ['m1'], 'by month(d)');
  t.same(keep([{ kind: 'compare', fieldId: 4, op: '<', value: 31 }]), ['m0', 'm1'], 'month of day 31 is 1 (Feb 1st): strict bound weakens');
  t.same(keep([{ kind: 'compare', fieldId: 4, op: '>', value: 58 }]), ['m1', 'm2'], 'day 58 is Feb 28th');
  t.same(keep([{ kind: 'compare', fieldId: 4, op: '>', value: 59 }]), ['m2'], 'day 59 is Mar 1st');
  t.same(keep([{ kind: 'is-null', fieldId: 4, negated: false }]), [], 'partition values are non-null: no null d');
  const r = pruneFiles(tasks, [{ kind: 'compare', fieldId: 1, op: '>=', value: 15 }], ctx);
  t.equal(r.prunedFiles, 1);
  t.equal(r.estimatedRows, 20);
  t.equal(r.estimatedBytes, 200);
});
