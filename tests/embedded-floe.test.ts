/** `import { Floe } from 'floe'`: the engine in-process, SQL with typed results, history recorded. */
import t from 'tap';
import { Floe, isFloeError } from '../index.js';

const floe = await Floe.open();
t.teardown(() => floe.close());

t.test('runs statements and records them', async (t) => {
  const use = await floe.sql('USE analytics');
  t.same(use.session, { catalog: 'default', schema: 'analytics', settings: {} });
  const error = await floe.sql('SELEC 1').then(() => undefined, (e: unknown) => e);
  t.ok(isFloeError(error) && error.code === 'SYNTAX_ERROR' && error.sqlState === '42601', 'a syntax error is a FloeError');
  const history = await floe.sql('SHOW QUERY HISTORY LIMIT 3');
  const sqlAt = history.columns.indexOf('sql');
  t.same(history.rows.map((r) => r[sqlAt]), ['SHOW QUERY HISTORY LIMIT 3', 'SELEC 1', 'USE analytics']);
});
