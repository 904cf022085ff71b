import t from 'tap';
import fc from 'fast-check';
import type { PlanFeatures, WorkloadClass } from '../../grammar/index.js';
import { classifyWorkload, DEFAULT_CLASS_LIMITS, PRIORITY_VALUES } from './classify.js';

const featuresArb: fc.Arbitrary<PlanFeatures> = fc.record({
  joins: fc.integer({ min: 0, max: 6 }),
  scans: fc.integer({ min: 0, max: 8 }),
  windowFunctions: fc.integer({ min: 0, max: 3 }),
  aggregates: fc.integer({ min: 0, max: 4 }),
});
const rowsArb = fc.oneof(
  fc.integer({ min: 0, max: 20_000_000 }),
  fc.constantFrom(0, 99_999, 100_000, 100_001, 9_999_999, 10_000_000, 10_000_001, Number.NaN, -5),
);
const classArb = fc.constantFrom<WorkloadClass>('interactive', 'medium', 'batch');
const RANK: Readonly<Record<WorkloadClass, number>> = { interactive: 0, medium: 1, batch: 2 };

/** The spec's table, read literally. */
function specClass(f: PlanFeatures, rows: number): WorkloadClass {
  const r = Number.isFinite(rows) && rows > 0 ? rows : 0;
  const batch = f.joins >= 3 || (f.windowFunctions > 0 && f.aggregates > 0) || r > 10_000_000;
  const medium = (f.joins >= 1 && f.joins <= 2) || f.windowFunctions > 0 || f.scans >= 3 || (r >= 100_000 && r <= 10_000_000);
  return batch ? 'batch' : medium ? 'medium' : 'interactive';
}

t.test('automatic class follows the spec table', async (t) => {
  fc.assert(fc.property(featuresArb, rowsArb, (f, rows) => classifyWorkload(f, rows).workloadClass === specClass(f, rows)), { numRuns: 2000 });
  t.equal(classifyWorkload({ joins: 0, scans: 1, windowFunctions: 0, aggregates: 1 }, 99_999).workloadClass, 'interactive');
  t.equal(classifyWorkload({ joins: 0, scans: 1, windowFunctions: 0, aggregates: 1 }, 100_000).workloadClass, 'medium');
  t.equal(classifyWorkload({ joins: 0, scans: 1, windowFunctions: 0, aggregates: 1 }, 10_000_000).workloadClass, 'medium');
  t.equal(classifyWorkload({ joins: 0, scans: 1, windowFunctions: 0, aggregates: 1 }, 10_000_001).workloadClass, 'batch');
  t.equal(classifyWorkload({ joins: 0, scans: 3, windowFunctions: 0, aggregates: 0 }, 10).workloadClass, 'medium');
  t.equal(classifyWorkload({ joins: 2, scans: 3, windowFunctions: 0, aggregates: 0 }, 10).workloadClass, 'medium');
  t.equal(classifyWorkload({ joins: 3, scans: 4, windowFunctions: 0, aggregates: 0 }, 10).workloadClass, 'batch');
  t.equal(classifyWorkload({ joins: 0, scans: 1, windowFunctions: 1, aggregates: 0 }, 10).workloadClass, 'medium');
  t.equal(classifyWorkload({ joins: 0, scans: 1, windowFunctions: 1, aggregates: 1 }, 10).workloadClass, 'batch');
});

t.test('more work never gives a lighter class', async (t) => {
  fc.assert(
    fc.property(featuresArb, fc.integer({ min: 0, max: 20_000_000 }), fc.record({ joins: fc.nat(3), scans: fc.nat(3), windowFunctions: fc.nat(2), aggregates: fc.nat(2) }), fc.nat(20_000_000), (f, rows, more, moreRows) => {
      const g = { joins: f.joins + more.joins, scans: f.scans + more.scans, windowFunctions: f.windowFunctions + more.windowFunctions, aggregates: f.aggregates + more.aggregates };
      return RANK[classifyWorkload(g, rows + moreRows).workloadClass] >= RANK[classifyWorkload(f, rows).workloadClass];
    }),
    { numRuns: 1000 },
  );
  t.pass();
});

t.test('integer priorities (the workload manager resolved limits) pass through', async (t) => {
  const c = classifyWorkload({ joins: 0, scans: 1, windowFunctions: 0, aggregates: 0 }, 1, { classes: { interactive: { priority: 4, timeoutMs: 5_000, memoryCapBytes: 1 } } });
  t.match(c, { priority: 'critical', priorityValue: 4, timeoutMs: 5_000, memoryCapBytes: 1 });
  t.equal(classifyWorkload({ joins: 1, scans: 2, windowFunctions: 0, aggregates: 0 }, 1, { classes: { medium: { priority: 7 } } }).priority, 'critical');
});

t.test('defaults per class, operator overrides, session override wins', async (t) => {
  const i = classifyWorkload({ joins: 0, scans: 1, windowFunctions: 0, aggregates: 0 }, 10);
  t.match(i, { workloadClass: 'interactive', priority: 'high', priorityValue: PRIORITY_VALUES.high, timeoutMs: 30_000, memoryCapBytes: 1024 ** 3, source: 'automatic' });
  t.match(classifyWorkload({ joins: 1, scans: 2, windowFunctions: 0, aggregates: 0 }, 10), { priority: 'normal', timeoutMs: 180_000, memoryCapBytes: 4 * 1024 ** 3 });
  t.match(classifyWorkload({ joins: 4, scans: 5, windowFunctions: 0, aggregates: 0 }, 10), { priority: 'low', timeoutMs: 600_000, memoryCapBytes: 8 * 1024 ** 3 });
  fc.assert(
    fc.property(featuresArb, rowsArb, fc.option(classArb, { nil: undefined }), fc.dictionary(classArb, fc.record({ timeoutMs: fc.nat(), memoryCapBytes: fc.nat(), priority: fc.constantFrom('high', 'normal', 'low') as fc.Arbitrary<'high' | 'normal' | 'low'> }, { requiredKeys: [] })), (f, rows, session, classes) => {
      const c = classifyWorkload(f, rows, { ...(session !== undefined ? { session } : {}), classes });
      const expectedClass = session ?? specClass(f, rows);
      const op = classes[expectedClass] ?? {};
      return (
        c.workloadClass === expectedClass &&
        c.automaticClass === specClass(f, rows) &&
        c.source === (session === undefined ? 'automatic' : 'session') &&
        c.timeoutMs === (op.timeoutMs ?? DEFAULT_CLASS_LIMITS[expectedClass].timeoutMs) &&
        c.memoryCapBytes === (op.memoryCapBytes ?? DEFAULT_CLASS_LIMITS[expectedClass].memoryCapBytes) &&
        c.priority === (op.priority ?? DEFAULT_CLASS_LIMITS[expectedClass].priority) &&
        c.priorityValue === PRIORITY_VALUES[c.priority]
      );
    }),
    { numRuns: 1000 },
  );
});
