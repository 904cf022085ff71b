/**
 * The SQL statement corpus (tests/grammar/corpus/): loading the data files. Shared by the corpus,
 * fuzz and redaction tests and by bench/parse.ts. The format is described in docs/grammar.md:
 *
 * - `valid/<area>.sql`: statements separated by lines holding exactly `----`. A statement keeps its
 *   comments; blank lines before it and trailing whitespace are dropped.
 * - `invalid/<area>.sql`: the same separator; in each chunk a header line
 *   `-- error <line>:<column> expected: <text>` precedes the statement (lines above the header are
 *   notes for the reader). Line and column are 1-based, relative to the statement's first line;
 *   `<text>` is the exact `expected` parameter of the SYNTAX_ERROR.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Project root (compiled files run from `dist/tests/grammar/` or `dist/bench/`). */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!readdirSync(dir).includes('package.json')) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('project root not found');
    dir = up;
  }
  return dir;
}

export const PROJECT_ROOT = projectRoot();
export const CORPUS_DIR = path.join(PROJECT_ROOT, 'tests', 'grammar', 'corpus');
export const TPCH_DIR = path.resolve(PROJECT_ROOT, '../shared/data/tpch');

export interface ValidStatement {
  /** `area.sql#n` (1-based within the file), for test names. */
  readonly id: string;
  readonly area: string;
  readonly sql: string;
}

export interface InvalidStatement {
  readonly id: string;
  readonly area: string;
  readonly sql: string;
  readonly line: number;
  readonly column: number;
  readonly expected: string;
}

const SEPARATOR = /^----$/m;
const HEADER = /^-- error (\d+):(\d+) expected: (.*)$/;

function areaFiles(kind: 'valid' | 'invalid'): { area: string; text: string }[] {
  const dir = path.join(CORPUS_DIR, kind);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => ({ area: f.slice(0, -4), text: readFileSync(path.join(dir, f), 'utf8') }));
}

/** Every valid statement of the corpus. */
export function loadValidCorpus(): ValidStatement[] {
  const out: ValidStatement[] = [];
  for (const { area, text } of areaFiles('valid')) {
    let n = 0;
    for (const chunk of text.split(SEPARATOR)) {
      const sql = chunk.replace(/^(?:[ \t]*\n)+/, '').trimEnd();
      if (sql.length === 0) continue;
      n++;
      out.push({ id: `${area}.sql#${n}`, area, sql });
    }
  }
  return out;
}

/** Every invalid statement of the corpus with its expected error. */
export function loadInvalidCorpus(): InvalidStatement[] {
  const out: InvalidStatement[] = [];
  for (const { area, text } of areaFiles('invalid')) {
    let n = 0;
    for (const chunk of text.split(SEPARATOR)) {
      const lines = chunk.replace(/^\n/, '').replace(/\n$/, '').split('\n');
      const at = lines.findIndex((l) => HEADER.test(l));
      if (at < 0) {
        if (lines.some((l) => l.trim() !== '' && !l.startsWith('--'))) throw new Error(`${area}.sql: a statement without an "-- error" header`);
        continue;
      }
      const m = HEADER.exec(lines[at]!)!;
      n++;
      out.push({ id: `${area}.sql#${n}`, area, sql: lines.slice(at + 1).join('\n'), line: Number(m[1]), column: Number(m[2]), expected: m[3]! });
    }
  }
  return out;
}

/** The 22 TPC-H queries of ../shared/data/tpch/queries, as `[name, sql]`. */
export function loadTpchQueries(): [string, string][] {
  const dir = path.join(TPCH_DIR, 'queries');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => [f.slice(0, -4), readFileSync(path.join(dir, f), 'utf8')]);
}
