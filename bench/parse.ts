/**
 * Parse benchmark (`npm run bench -- parse`): SQL text → Statement IR.
 *
 * - Per TPC-H query: median time of an uncached parse (lexer, Ohm match, semantics) and of a cached
 *   one (the parse cache hit), with DuckDB's own parse of the same text as the reference, measured
 *   in the same run: `SELECT json_serialize_sql($1)` through a prepared statement (so it includes
 *   DuckDB's parse, its JSON serialization and one call through the Node binding; the same call on
 *   `SELECT 1` is reported as that overhead).
 * - Over the whole statement corpus (tests/grammar/corpus/valid): statements per second of the
 *   median pass, uncached and cached. Statements carrying secrets are never cached, so they parse
 *   on every pass.
 *
 * Targets (issue 3): every TPC-H query ≤ 2 ms median uncached and ≤ 0.05 ms cached.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { createParser } from '../grammar/index.js';
import { loadTpchQueries, loadValidCorpus } from '../tests/grammar/corpus.js';
import { atMost, percentile, writeBenchResult } from './report.js';

const UNCACHED_SAMPLES = 100;
const CACHED_BATCHES = 21;
const CACHED_BATCH_SIZE = 500;
const DUCKDB_SAMPLES = 100;
const CORPUS_PASSES = 9;

function median(samples: number[]): number {
  return percentile([...samples].sort((a, b) => a - b), 50);
}

const round = (ms: number): number => Math.round(ms * 1e6) / 1e6;

async function main(): Promise<void> {
  const queries = loadTpchQueries();
  const corpus = loadValidCorpus().map((v) => v.sql);

  const uncachedParser = createParser({ cacheSize: 0 });
  const cachedParser = createParser({ cacheSize: 10_000 });
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const serialize = await conn.prepare('SELECT json_serialize_sql($1::VARCHAR)');
  const duckdbParse = async (sql: string): Promise<number> => {
    serialize.bindVarchar(1, sql);
    const start = performance.now();
    const r = await serialize.runAndReadAll();
    const ms = performance.now() - start;
    const json = String(r.getRows()[0]![0]);
    if (json.includes('"error":true')) throw new Error(`DuckDB could not parse: ${json.slice(0, 200)}`);
    return ms;
  };

  // Warm up every path (JIT, Ohm's grammar, DuckDB's binding).
  for (let i = 0; i < 20; i++) {
    for (const [, sql] of queries) {
      uncachedParser.parseUncached(sql);
      cachedParser.tryParse(sql);
    }
  }
  for (const [, sql] of queries) await duckdbParse(sql);

  // Rounds over all queries (rather than all samples of one query, then the next) so that a burst
  // of load from the other processes on this machine spreads over every query instead of
  // inflating one query's median.
  const uncached = new Map<string, number[]>(queries.map(([name]) => [name, []]));
  const cached = new Map<string, number[]>(queries.map(([name]) => [name, []]));
  const duck = new Map<string, number[]>(queries.map(([name]) => [name, []]));
  for (let round = 0; round < UNCACHED_SAMPLES; round++) {
    for (const [name, sql] of queries) {
      const start = performance.now();
      const r = uncachedParser.parseUncached(sql);
      uncached.get(name)!.push(performance.now() - start);
      if (!r.ok) throw new Error(`${name} does not parse`);
    }
  }
  for (let round = 0; round < CACHED_BATCHES; round++) {
    for (const [name, sql] of queries) {
      const start = performance.now();
      for (let i = 0; i < CACHED_BATCH_SIZE; i++) cachedParser.tryParse(sql);
      cached.get(name)!.push((performance.now() - start) / CACHED_BATCH_SIZE);
    }
  }
  for (let round = 0; round < DUCKDB_SAMPLES; round++) {
    for (const [name, sql] of queries) duck.get(name)!.push(await duckdbParse(sql));
  }
  const perQuery: Record<string, { uncached_ms: number; cached_ms: number; duckdb_ms: number; uncached_vs_duckdb: number }> = {};
  for (const [name] of queries) {
    const u = median(uncached.get(name)!);
    const d = median(duck.get(name)!);
    perQuery[name] = { uncached_ms: round(u), cached_ms: round(median(cached.get(name)!)), duckdb_ms: round(d), uncached_vs_duckdb: Math.round((u / d) * 100) / 100 };
  }
  const trivial: number[] = [];
  for (let i = 0; i < DUCKDB_SAMPLES; i++) trivial.push(await duckdbParse('SELECT 1'));

  // Corpus throughput: the median pass.
  const uncachedPasses: number[] = [];
  for (let pass = 0; pass < CORPUS_PASSES; pass++) {
    const start = performance.now();
    for (const sql of corpus) if (!uncachedParser.parseUncached(sql).ok) throw new Error(`a corpus statement does not parse: ${sql}`);
    uncachedPasses.push(corpus.length / ((performance.now() - start) / 1000));
  }
  for (const sql of corpus) cachedParser.tryParse(sql);
  const cachedPasses: number[] = [];
  for (let pass = 0; pass < CORPUS_PASSES * 4; pass++) {
    const start = performance.now();
    for (let k = 0; k < 10; k++) for (const sql of corpus) cachedParser.tryParse(sql);
    cachedPasses.push((corpus.length * 10) / ((performance.now() - start) / 1000));
  }

  conn.closeSync();
  db.closeSync();

  const rows = Object.values(perQuery);
  const maxUncached = Math.max(...rows.map((r) => r.uncached_ms));
  const maxCached = Math.max(...rows.map((r) => r.cached_ms));
  const sumUncached = rows.reduce((s, r) => s + r.uncached_ms, 0);
  const sumDuck = rows.reduce((s, r) => s + r.duckdb_ms, 0);
  const uncachedPerSecond = Math.round(median(uncachedPasses));
  const cachedPerSecond = Math.round(median(cachedPasses));
  const slowest = Object.entries(perQuery).sort((a, b) => b[1].uncached_ms - a[1].uncached_ms)[0]!;

  writeBenchResult(
    'parse',
    {
      tpch: perQuery,
      tpch_total_uncached_ms: round(sumUncached),
      tpch_total_duckdb_ms: round(sumDuck),
      tpch_uncached_vs_duckdb: Math.round((sumUncached / sumDuck) * 100) / 100,
      duckdb_call_overhead_ms: round(median(trivial)),
      corpus_statements: corpus.length,
      corpus_statements_per_second_uncached: uncachedPerSecond,
      corpus_statements_per_second_cached: cachedPerSecond,
      note: 'medians; 2 shared cores under load from other agents, so absolute numbers are noisy; the DuckDB column is measured in the same run',
    },
    {
      tpch_max_median_uncached_ms: atMost(maxUncached, 2),
      tpch_max_median_cached_ms: atMost(maxCached, 0.05),
    },
    `TPC-H median parse uncached max ${maxUncached.toFixed(3)} ms (${slowest[0]}), cached max ${(maxCached * 1000).toFixed(2)} µs; ` +
      `all 22 uncached ${sumUncached.toFixed(2)} ms vs DuckDB json_serialize_sql ${sumDuck.toFixed(2)} ms (x${(sumUncached / sumDuck).toFixed(2)}); ` +
      `corpus ${uncachedPerSecond} statements/s uncached, ${cachedPerSecond} cached`,
  );
}

await main();
