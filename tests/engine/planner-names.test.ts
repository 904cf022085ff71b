/**
 * The namespace-path rule (engine/planner/names.ts): one part is a namespace of the current catalog;
 * longer paths are catalog `p0` or a nested namespace of the current catalog, whichever exists,
 * AMBIGUOUS_NAME when both do, the catalog reading when neither does; each fact asked at most once.
 */
import t from 'tap';
import { FloeError } from '../../grammar/index.js';
import { namespaceKey, resolveNamespacePath, type NamespaceRef, type PathResolution } from '../../engine/planner/index.js';

/** Resolves against a set of existing namespaces, answering the rule's questions as the runner does. */
function resolve(parts: string[], current: string | undefined, existing: NamespaceRef[]): { result: PathResolution; asked: string[] } {
  const exists = new Set(existing.map(namespaceKey));
  const facts = new Map<string, boolean>();
  const asked: string[] = [];
  for (;;) {
    const r = resolveNamespacePath(parts, current, facts);
    if (r.kind === 'resolved') return { result: r, asked };
    const key = namespaceKey(r.namespace);
    t.notOk(facts.has(key), `asked once: ${key}`);
    asked.push(key);
    facts.set(key, exists.has(key));
  }
}

t.test('the readings of a path', async (t) => {
  const ab = { catalog: 'default', namespace: ['a', 'b'] };
  const cB = { catalog: 'a', namespace: ['b'] };
  t.match(resolve(['s'], 'default', []).result, { catalog: 'default', namespace: ['s'] }, 'one part: the current catalog');
  t.match(resolve(['a', 'b'], 'default', [ab]).result, { catalog: 'default', namespace: ['a', 'b'] }, 'only the nested namespace exists');
  t.match(resolve(['a', 'b'], 'default', [cB]), { result: { catalog: 'a', namespace: ['b'] }, asked: [namespaceKey(ab)] }, 'only the catalog reading exists: one question');
  t.match(resolve(['a', 'b'], 'default', []).result, { catalog: 'a', namespace: ['b'] }, 'neither: the catalog reading (its errors name what is missing)');
  t.match(resolve(['a', 'b'], undefined, [ab]).result, { catalog: 'a', namespace: ['b'] }, 'no current catalog: only the catalog reading');
  t.match(resolveNamespacePath(['a', 'b', 'c'], 'default', undefined), { kind: 'resolved', catalog: 'a', namespace: ['b', 'c'] }, 'no facts: catalog.namespace…');
  const both = (() => {
    try {
      resolve(['a', 'b'], 'default', [ab, cB]);
      return undefined;
    } catch (e) {
      return e;
    }
  })();
  t.ok(both instanceof FloeError && both.code === 'AMBIGUOUS_NAME' && both.sqlState === '42P09', 'both exist: ambiguous');
  t.match((both as Error).message, /namespace b of catalog a, and as namespace a\.b of the current catalog default; write default\.a\.b/);
  t.match(resolve(['x.y', 'z'], 'default', [{ catalog: 'default', namespace: ['x.y', 'z'] }]).result, { catalog: 'default', namespace: ['x.y', 'z'] }, 'a level may hold a dot');
});
