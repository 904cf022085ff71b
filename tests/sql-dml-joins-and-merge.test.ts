/**
 * UPDATE … FROM, DELETE … USING and MERGE on copy-on-write and merge-on-read tables, on both store
 * backends, differentially against DuckDB: every statement runs on Floe and on a DuckDB copy of the
 * same data, and the answers' counts and the tables' rows must agree, read through Floe and read
 * back by an independent path (avsc-decoded manifests, DuckDB over the data files by field id,
 * position deletes anti-joined). Each change is one snapshot whose summary matches its manifests;
 * copy-on-write replaces exactly the data files that held changed rows, merge-on-read replaces none
 * and deletes exactly the changed rows' positions. A target row paired with several rows is 21000
 * and commits nothing. Query history records every statement.
 */
import t from 'tap';
import type { Test } from 'tap';
import { DuckDBInstance } from '@duckdb/node-api';
import { Floe, isFloeError } from '../index.js';
import { currentSchema, currentSnapshot } from '../catalog/iceberg/table-metadata.js';
import type { TableMetadata } from '../catalog/iceberg/table-metadata.js';
import type { IcebergType } from '../catalog/iceberg/types.js';
import { onEachBackend } from './helpers/stores.js';
import { localFile, manifestEntries, readBackRows } from './helpers/iceberg-files.js';

const MODES = ['copy-on-write', 'merge-on-read'] as const;
type Mode = (typeof MODES)[number];

const COLUMNS = 'id int NOT NULL, grp int, v bigint, note varchar, price decimal(10,2)';
/** The rows compared everywhere, in a form both sides print alike. */
const ROW = 'id, grp, v, note, CAST(price AS VARCHAR)';

/** DuckDB's name of an Iceberg type, written here rather than taken from the engine. */
function duckdbTypeOf(type: IcebergType): string {
  switch (type.kind) {
    case 'int': return 'INTEGER';
    case 'long': return 'BIGINT';
    case 'string': return 'VARCHAR';
    case 'decimal': return `DECIMAL(${type.precision},${type.scale})`;
    default: throw new Error(`no read-back type for ${type.kind}`);
  }
}

const plain = (rows: unknown[][]): unknown[][] => rows.map((r) => r.map((v) => (typeof v === 'bigint' ? Number(v) : v)));

await onEachBackend(t, async (t, store) => {
  const floe = await Floe.open({ store });
  t.teardown(() => floe.close());
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  t.teardown(() => conn.closeSync());
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  const duckRows = async (sql: string) => plain((await conn.runAndReadAll(sql)).getRowsJS());
  const both = async (sql: string) => {
    await floe.sql(sql);
    await conn.run(sql);
  };

  for (const mode of MODES) {
    await t.test(mode, async (t) => {
      const ns = mode === 'copy-on-write' ? 'cow' : 'mor';
      const table = `${ns}.items`;
      const meta = async (): Promise<TableMetadata> => (await floe.state.catalog.loadTable(admin, 'default', { namespace: [ns], name: 'items' })).metadata;
      const readBack = async (m: TableMetadata) => readBackRows(conn, m, currentSchema(m).fields.map((f) => ({ id: f.id, name: f.name, duckdbType: duckdbTypeOf(f.type) })), ROW, 'id');

      await both(`CREATE SCHEMA ${ns}`);
      await floe.sql(`CREATE TABLE ${table} (${COLUMNS}) PARTITIONED BY (grp)
        TBLPROPERTIES ('write.delete.mode' = '${mode}', 'write.update.mode' = '${mode}', 'write.merge.mode' = '${mode}')`);
      await conn.run(`CREATE TABLE ${table} (${COLUMNS})`);
      // Two inserts of five partitions each: ten data files, so a change touches some files only.
      for (const [lo, hi] of [[0, 30], [30, 60]]) {
        await both(`INSERT INTO ${table} SELECT x, x % 5, x * 10, 'n' || x, CAST(x * 1.25 AS decimal(10,2)) FROM range(${lo}, ${hi}) r(x)`);
      }
      await both(`CREATE TABLE ${ns}.deltas (id int, delta int, tag varchar, kind int)`);
      await both(`INSERT INTO ${ns}.deltas VALUES (3, 5, 'up', 1), (8, -2, 'down', 2), (13, 4, 'keep', 3), (31, 7, 'up', 1),
        (44, -1, 'drop', 2), (57, 2, 'drop', 1), (70, 9, 'new', 2), (71, -3, 'neg', 3)`);
      await both(`CREATE TABLE ${ns}.kinds (kind int, factor int)`);
      await both(`INSERT INTO ${ns}.kinds VALUES (1, 2), (2, 3), (3, 4)`);
      t.equal((await readBack(await meta())).length, 60);

      /** DuckDB's counts for a statement, in Floe's answer columns. */
      const reference = async (sql: string): Promise<number[]> => {
        if (sql.startsWith('MERGE')) {
          const actions = await duckRows(`${sql} RETURNING merge_action`);
          const n = (a: string) => actions.filter((r) => r[0] === a).length;
          return [n('INSERT'), n('UPDATE'), n('DELETE')];
        }
        return [Number((await duckRows(sql))[0]![0])];
      };

      /**
       * Runs a changing statement on both sides and checks the answer, the rows (through Floe and read
       * back independently), the one new snapshot, its summary against its manifest entries, and which
       * data files or row positions it replaced.
       */
      const step = async (t: Test, sql: string, operation: string) => {
        const before = await meta();
        const rowsBefore = await readBack(before);
        await conn.run('CREATE OR REPLACE TABLE main.before AS SELECT * FROM ' + table);
        const answer = await floe.sql(sql);
        const expected = await reference(sql);
        t.same(answer.rows, [expected], `the counts are DuckDB's (${expected.join(', ')})`);
        const rows = await duckRows(`SELECT ${ROW} FROM ${table} ORDER BY id`);
        t.same((await floe.sql(`SELECT ${ROW} FROM ${table} ORDER BY id`)).rows, rows, 'Floe reads the rows DuckDB has');
        const after = await meta();
        const rowsAfter = await readBack(after);
        t.same(rowsAfter.map((r) => r.slice(0, 5)), rows, 'the files read back independently hold the same rows');

        t.equal(after.snapshots.length, before.snapshots.length + 1, 'one snapshot');
        const snap = currentSnapshot(after)!;
        const summary = Object.fromEntries(snap.summary);
        t.equal(summary.operation, operation);
        const entries = await manifestEntries(after);
        const mine = (e: (typeof entries)[number]) => (e.snapshot_id ?? e.manifestSnapshotId) === snap.snapshotId;
        const addedData = entries.filter((e) => e.status === 1 && (e.data_file.content ?? 0) === 0 && mine(e));
        const removedData = entries.filter((e) => e.status === 2 && (e.data_file.content ?? 0) === 0 && mine(e));
        const addedDeletes = entries.filter((e) => e.status === 1 && e.data_file.content === 1 && mine(e));
        const records = (xs: typeof entries) => xs.reduce((n, e) => n + Number(e.data_file.record_count), 0);
        const counter = (key: string) => Number(summary[key] ?? 0);
        t.equal(counter('added-data-files'), addedData.length, 'added-data-files');
        t.equal(counter('added-records'), records(addedData), 'added-records');
        t.equal(counter('deleted-data-files'), removedData.length, 'deleted-data-files');
        t.equal(counter('deleted-records'), records(removedData), 'deleted-records');
        t.equal(counter('added-delete-files'), addedDeletes.length, 'added-delete-files');
        t.equal(counter('added-position-deletes'), records(addedDeletes), 'added-position-deletes');
        t.equal(counter('total-records') - counter('total-position-deletes'), rowsAfter.length, 'total-records less position deletes is the live row count');

        // The rows the statement changed or deleted, by DuckDB (every update here changes a value), and where they were.
        const changedIds = new Set((await duckRows(`SELECT id FROM (SELECT * FROM main.before EXCEPT SELECT * FROM ${table})`)).map((r) => r[0]));
        const changed = rowsBefore.filter((r) => changedIds.has(r[0]));
        t.equal(changed.length, changedIds.size);
        const [inserted, updated, deleted] = expected.length === 3 ? expected : sql.startsWith('UPDATE') ? [0, expected[0]!, 0] : [0, 0, expected[0]!];
        t.equal(changed.length, updated! + deleted!, 'DuckDB changed the rows the statement counted');
        if (mode === 'copy-on-write') {
          t.same(new Set(removedData.map((e) => localFile(e.data_file.file_path))), new Set(changed.map((r) => r[5])), 'exactly the files that held changed rows are replaced');
          t.equal(addedDeletes.length, 0, 'no delete files');
          t.equal(records(addedData) - records(removedData), inserted! - deleted!, 'rows added less rows removed');
        } else {
          t.equal(removedData.length, 0, 'no data file is replaced');
          t.equal(records(addedData), updated! + inserted!, 'the new data files hold the updated and inserted rows');
          const deletesRead = addedDeletes.length === 0 ? [] : await duckRows(`SELECT file_path, pos FROM read_parquet([${addedDeletes.map((e) => `'${localFile(e.data_file.file_path)}'`).join(', ')}])`);
          t.same(new Set(deletesRead.map((r) => `${localFile(String(r[0]))}#${r[1]}`)), new Set(changed.map((r) => `${r[5]}#${r[6]}`)), 'the delete files hold exactly the changed rows\' positions');
          for (const e of addedDeletes) {
            const targets = await duckRows(`SELECT DISTINCT file_path FROM read_parquet('${localFile(e.data_file.file_path)}')`);
            t.same(targets.map((r) => String(r[0])), [e.data_file.referenced_data_file], 'one data file per delete file, named by referenced_data_file');
          }
        }
      };

      await t.test('UPDATE … FROM one table', (t) => step(t,
        `UPDATE ${table} AS t SET v = t.v + d.delta, note = d.tag FROM ${ns}.deltas AS d WHERE t.id = d.id AND d.delta > 0`, 'overwrite'));
      await t.test('UPDATE … FROM a join, the target unaliased', (t) => step(t,
        `UPDATE ${table} SET price = items.price * k.factor FROM ${ns}.deltas AS d JOIN ${ns}.kinds AS k ON d.kind = k.kind WHERE items.id = d.id + 1`, 'overwrite'));
      await t.test('DELETE … USING, each target row matched three times', (t) => step(t,
        `DELETE FROM ${table} USING ${ns}.deltas AS d, ${ns}.kinds AS k WHERE items.id = d.id AND d.tag = 'drop' AND k.factor >= 1`,
        mode === 'copy-on-write' ? 'overwrite' : 'delete'));
      await t.test('MERGE: delete, do nothing, update, conditional insert', (t) => step(t,
        `MERGE INTO ${table} AS t USING ${ns}.deltas AS d ON t.id = d.id
          WHEN MATCHED AND d.delta < 0 THEN DELETE
          WHEN MATCHED AND d.tag = 'keep' THEN DO NOTHING
          WHEN MATCHED THEN UPDATE SET v = t.v + d.delta, note = 'merged'
          WHEN NOT MATCHED AND d.delta > 0 THEN INSERT (id, grp, v, note) VALUES (d.id, d.kind, d.delta, d.tag)`, 'overwrite'));
      await t.test('MERGE that only inserts appends', (t) => step(t,
        `MERGE INTO ${table} AS t USING (SELECT id + 100 AS id, kind, delta FROM ${ns}.deltas) AS d ON t.id = d.id
          WHEN NOT MATCHED THEN INSERT (id, grp, v) VALUES (d.id, d.kind, d.delta)`, 'append'));
      await t.test('MERGE: a row paired twice and left alone, in a file that changes, is kept once', (t) => step(t,
        `MERGE INTO ${table} AS t USING (SELECT * FROM (VALUES (7, 'x'), (7, 'y'), (12, 'z')) AS v(id, tag)) AS d ON t.id = d.id
          WHEN MATCHED AND d.id = 7 THEN DO NOTHING
          WHEN MATCHED THEN UPDATE SET note = d.tag`, 'overwrite'));
      await t.test('UPDATE … FROM the target table again', (t) => step(t,
        `UPDATE ${table} SET note = prev.note || '+' FROM ${table} AS prev WHERE items.id = prev.id + 1 AND items.id % 7 = 0`, 'overwrite'));
      await t.test('MERGE with the target table as its source', (t) => step(t,
        `MERGE INTO ${table} AS t USING ${table} AS o ON t.id = o.id + 1
          WHEN MATCHED AND o.id % 9 = 0 THEN UPDATE SET note = 'after ' || o.note
          WHEN NOT MATCHED AND o.id > 100 THEN INSERT (id, grp, v) VALUES (o.id + 1, 0, 0)`, 'overwrite'));
      await t.test('UPDATE and DELETE with subqueries on another table', async (t) => {
        await step(t, `UPDATE ${table} SET v = (SELECT max(delta) FROM ${ns}.deltas) WHERE id IN (SELECT id + 2 FROM ${ns}.deltas WHERE kind = 2)`, 'overwrite');
        await step(t, `DELETE FROM ${table} WHERE id IN (SELECT id + 3 FROM ${ns}.deltas WHERE kind = 1)`, mode === 'copy-on-write' ? 'overwrite' : 'delete');
      });
      await t.test('MERGE that only deletes', (t) => step(t,
        `MERGE INTO ${table} AS t USING (SELECT 20 AS id UNION ALL SELECT 21) AS d ON t.id = d.id WHEN MATCHED THEN DELETE`,
        mode === 'copy-on-write' ? 'overwrite' : 'delete'));

      await t.test('a target row paired with several rows is refused, nothing committed', async (t) => {
        const before = await meta();
        for (const sql of [
          `UPDATE ${table} AS t SET v = 0 FROM ${ns}.kinds AS k WHERE t.id = 0`,
          `MERGE INTO ${table} AS t USING ${ns}.kinds AS k ON t.id = k.kind - k.kind WHEN MATCHED THEN UPDATE SET v = 1`,
          `MERGE INTO ${table} AS t USING ${ns}.kinds AS k ON t.id = k.kind - k.kind WHEN MATCHED AND k.factor = 2 THEN DELETE`,
        ]) {
          const e = await floe.sql(sql).then(() => undefined, (x: unknown) => x);
          t.ok(isFloeError(e), sql);
          t.match(e, { code: 'CARDINALITY_VIOLATION', sqlState: '21000', message: /more than one/ });
        }
        // Paired twice but no pair changes it: nothing to refuse.
        t.same((await floe.sql(`MERGE INTO ${table} AS t USING ${ns}.kinds AS k ON t.id = k.kind - k.kind WHEN MATCHED AND k.factor > 5 THEN DELETE`)).rows, [[0, 0, 0]]);
        t.same((await floe.sql(`UPDATE ${table} AS t SET v = 0 FROM ${ns}.deltas AS d WHERE t.id = d.id AND d.delta > 1000`)).rows, [[0]], 'no match, no change');
        t.same((await floe.sql(`DELETE FROM ${table} USING ${ns}.deltas AS d WHERE items.id = d.id AND d.tag = 'none'`)).rows, [[0]]);
        const after = await meta();
        t.equal(after.snapshots.length, before.snapshots.length, 'no snapshot');
        t.same((await floe.sql(`SELECT ${ROW} FROM ${table} ORDER BY id`)).rows, await duckRows(`SELECT ${ROW} FROM ${table} ORDER BY id`));
      });

      await t.test('bad statements are clear errors', async (t) => {
        const fails = async (sql: string) => floe.sql(sql).then(() => undefined, (x: unknown) => x);
        t.match(await fails(`UPDATE ${table} AS t SET v = d.nope FROM ${ns}.deltas AS d WHERE t.id = d.id`), { code: 'UNDEFINED_COLUMN' });
        t.match(await fails(`DELETE FROM ${table} USING ${ns}.missing AS d WHERE items.id = d.id`), { code: 'UNDEFINED_TABLE' });
        t.match(await fails(`UPDATE ${table} AS t SET id = NULL FROM ${ns}.deltas AS d WHERE t.id = d.id`), { message: /NOT NULL/ });
        t.match(await fails(`MERGE INTO ${table} AS t USING (SELECT 999 AS id) AS d ON t.id = d.id WHEN NOT MATCHED THEN INSERT (grp) VALUES (1)`), { message: /NOT NULL/ });
      });

      await t.test('query history records each statement', async (t) => {
        const history = (await floe.sql(`SELECT sql, status, query_type, rows_produced, sql_state, bytes_scanned FROM system.query_history
          WHERE sql LIKE '%${ns}.%' AND (sql LIKE 'UPDATE%' OR sql LIKE 'DELETE%' OR sql LIKE 'MERGE%')`)).rows;
        const completed = history.filter((h) => h[1] === 'completed');
        const failed = history.filter((h) => h[1] === 'failed');
        t.equal(completed.length, 14, 'eleven changes and three without effect');
        t.equal(failed.length, 7, 'three refused twice-paired rows and four bad statements');
        for (const h of completed) {
          t.equal(h[2], String(h[0]).split(' ')[0]!.toLowerCase(), 'query_type');
          t.equal(h[3], 1, 'rows_produced is the one answer row');
        }
        t.ok(completed.filter((h) => Number(h[5]) > 0).length >= 11, 'the changes scanned data files');
        t.same(failed.filter((h) => h[4] === '21000').length, 3, 'the refusals are 21000');
      });
    });
  }
});
