import t from 'tap';
import { mapDuckDBError, scrubPaths, splitDuckDBMessage } from './errors.js';

t.test('DuckDB messages split into kind and detail', async (t) => {
  t.same(splitDuckDBMessage('Conversion Error: Could not convert string \'x\' to INT32\nLINE 1: ...'), { kind: 'Conversion', detail: "Could not convert string 'x' to INT32" });
  t.same(splitDuckDBMessage('Out of Memory Error: failed to allocate'), { kind: 'Out of Memory', detail: 'failed to allocate' });
  t.same(splitDuckDBMessage('something odd'), { kind: '', detail: 'something odd' });
});

t.test('paths never reach users', async (t) => {
  t.equal(scrubPaths('Cannot access file "/srv/warehouse/t/data/x.parquet" - denied'), 'Cannot access file "<file>" - denied');
  t.equal(scrubPaths("No files found that match the pattern '/tmp/spill/q/f1.duckdb'"), "No files found that match the pattern '<file>'");
});

t.test('kinds map to registry codes', async (t) => {
  const code = (m: string) => mapDuckDBError(new Error(m)).code;
  t.equal(code('Out of Memory Error: x'), 'OUT_OF_MEMORY');
  t.equal(code('Conversion Error: x'), 'INVALID_TEXT_REPRESENTATION');
  t.equal(code('Out of Range Error: Overflow'), 'NUMERIC_OUT_OF_RANGE');
  t.equal(code('Permission Error: Cannot access file "/etc/passwd"'), 'PERMISSION_DENIED');
  t.equal(code('Invalid Input Error: Cannot change configuration option "threads" - the configuration has been locked'), 'PERMISSION_DENIED');
  t.equal(code('Invalid Input Error: division by zero'), 'DIVISION_BY_ZERO');
  t.equal(code('Binder Error: Referenced column "nope" not found in FROM clause!'), 'UNDEFINED_COLUMN');
  t.equal(code('Catalog Error: Scalar Function with name foo does not exist!'), 'UNDEFINED_FUNCTION');
  t.equal(code('INTERNAL Error: boom'), 'INTERNAL_ERROR');
  t.equal(mapDuckDBError(new Error('INTERRUPT Error: Interrupted!'), { kind: 'timeout', limitMs: 100 }).code, 'QUERY_TIMEOUT');
  t.equal(mapDuckDBError(new Error('INTERRUPT Error: Interrupted!'), { kind: 'cancel', reason: 'user' }).code, 'QUERY_CANCELLED');
  t.notMatch(mapDuckDBError(new Error('IO Error: No files found that match the pattern "/srv/w/x.parquet"')).message, /\/srv/);
});
