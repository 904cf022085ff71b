/**
 * Shared result writer of the benchmarks: every benchmark prints one summary line and writes
 * `bench/results/<name>.json` in the project's one format, with targets judged in the same run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, platform, arch } from 'node:os';
import { join } from 'node:path';

export interface Target {
  readonly value: number;
  readonly target: string;
  readonly met: boolean;
}

export interface BenchResult {
  readonly benchmark: string;
  readonly date: string;
  readonly machine: string;
  readonly metrics: Readonly<Record<string, unknown>>;
  readonly targets: Readonly<Record<string, Target>>;
}

/** A target of the form "value must be at least `min`". */
export function atLeast(value: number, min: number): Target {
  return { value, target: `>= ${min}`, met: value >= min };
}

/** A target of the form "value must be at most `max`". */
export function atMost(value: number, max: number): Target {
  return { value, target: `<= ${max}`, met: value <= max };
}

export function machineDescription(): string {
  const c = cpus();
  return `${platform()}-${arch()}, ${c.length} x ${c[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`;
}

/** Percentile (0..100) of a sample, nearest-rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Writes bench/results/<name>.json (relative to the project root) and prints the summary line. */
export function writeBenchResult(name: string, metrics: Record<string, unknown>, targets: Record<string, Target>, summary: string): BenchResult {
  const result: BenchResult = { benchmark: name, date: new Date().toISOString(), machine: machineDescription(), metrics, targets };
  const dir = join(process.cwd(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(result, null, 2) + '\n');
  const met = Object.values(targets).every((t) => t.met);
  console.log(`${name}: ${summary} | targets ${met ? 'met' : 'NOT met'} (${Object.entries(targets).map(([k, t]) => `${k}=${round(t.value)} ${t.target} ${t.met ? 'ok' : 'miss'}`).join(', ')})`);
  return result;
}

function round(v: number): number {
  return Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 1000) / 1000;
}
