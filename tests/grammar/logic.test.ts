/**
 * The sqllogictest-style corpus (tests/grammar/corpus/logic/*.slt, format in ./logic.ts): each file
 * runs in its own embedded Floe, statement by statement with the session carried along (USE), and
 * every statement must give the answer its record names.
 */
import t from 'tap';
import { Floe, isFloeError } from '../../index.js';
import { loadLogicCorpus, logicValue } from './logic.js';

for (const file of loadLogicCorpus()) {
  t.test(file.name, async (t) => {
    const floe = await Floe.open();
    t.teardown(() => floe.close());
    let session: { catalog?: string; schema?: string } = {};
    for (const record of file.records) {
      const at = `${file.name}:${record.line}`;
      const outcome = await floe.sql(record.sql, session).then(
        (answer) => ({ ok: true as const, answer }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      if (outcome.ok && outcome.answer.session) session = { catalog: outcome.answer.session.catalog, schema: outcome.answer.session.schema };
      switch (record.kind) {
        case 'ok':
          t.ok(outcome.ok, `${at} succeeds${outcome.ok ? '' : `: ${String((outcome.error as Error).message)}`}\n${record.sql}`);
          break;
        case 'error': {
          if (outcome.ok) {
            t.fail(`${at} fails with ${record.sqlState}, but it succeeded\n${record.sql}`);
            break;
          }
          const e = outcome.error;
          if (!isFloeError(e)) {
            t.fail(`${at}: not a FloeError: ${String(e)}`);
            break;
          }
          t.equal(e.sqlState, record.sqlState, `${at} fails with ${record.sqlState} (${e.message})\n${record.sql}`);
          if (record.message !== undefined) t.match(e.message, record.message, `${at}: the message names what is wrong`);
          break;
        }
        case 'query': {
          if (!outcome.ok) {
            t.fail(`${at} succeeds: ${String((outcome.error as Error).message)}\n${record.sql}`);
            break;
          }
          const { answer } = outcome;
          t.equal(answer.columns.length, record.types.length, `${at}: ${record.types.length} columns`);
          const rows = answer.rows.map((r) => r.map(logicValue).join('\t'));
          if (record.rowsort) rows.sort();
          const expected = record.rowsort ? [...record.rows].sort() : record.rows;
          t.same(rows, expected, `${at}: the rows\n${record.sql}`);
          break;
        }
        default:
          record satisfies never;
      }
    }
  });
}
