/**
 * The sqllogictest-style part of the corpus (tests/grammar/corpus/logic/*.slt): statements run
 * through the whole engine with the answer each must give. The format is sqllogictest's, reduced to
 * what the corpus needs (docs/grammar.md):
 *
 * - `statement ok` then the SQL: it must succeed.
 * - `statement error <SQLSTATE> [<text>]` then the SQL: it must fail with that SQLSTATE, and the
 *   message must contain `<text>` when given.
 * - `query <types> [rowsort]` then the SQL, a line `----`, then the expected rows, one a line,
 *   values separated by a tab; `<types>` has one letter per column (I integer, R real, T text,
 *   B boolean, as sqllogictest), NULL is `NULL`. `rowsort` compares the rows sorted.
 *
 * A record ends at a blank line; lines starting with `#` are comments.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CORPUS_DIR } from './corpus.js';

export type LogicRecord =
  | { readonly kind: 'ok'; readonly line: number; readonly sql: string }
  | { readonly kind: 'error'; readonly line: number; readonly sql: string; readonly sqlState: string; readonly message: string | undefined }
  | { readonly kind: 'query'; readonly line: number; readonly sql: string; readonly types: string; readonly rowsort: boolean; readonly rows: readonly string[] };

export interface LogicFile {
  /** `<area>.slt`, for test names. */
  readonly name: string;
  readonly records: readonly LogicRecord[];
}

/** Parses one `.slt` text; throws on a malformed record (the corpus is ours, so that is a bug). */
export function parseLogic(name: string, text: string): LogicFile {
  const lines = text.split('\n');
  const records: LogicRecord[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`${name}:${i + 1}: ${why}`);
  };
  while (i < lines.length) {
    const head = lines[i]!.trimEnd();
    if (head === '' || head.startsWith('#')) {
      i++;
      continue;
    }
    const line = i + 1;
    const words = head.split(/\s+/);
    i++;
    const sql: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && lines[i]!.trimEnd() !== '----') sql.push(lines[i++]!);
    if (sql.length === 0) fail('a record without SQL');
    const text = sql.join('\n');
    if (words[0] === 'statement' && words[1] === 'ok' && words.length === 2) {
      records.push({ kind: 'ok', line, sql: text });
    } else if (words[0] === 'statement' && words[1] === 'error' && /^[0-9A-Z]{5}$/.test(words[2] ?? '')) {
      const message = head.replace(/^statement\s+error\s+\S+\s*/, '');
      records.push({ kind: 'error', line, sql: text, sqlState: words[2]!, message: message === '' ? undefined : message });
    } else if (words[0] === 'query' && /^[IRTB]+$/.test(words[1] ?? '') && (words.length === 2 || (words.length === 3 && words[2] === 'rowsort'))) {
      if (lines[i]?.trimEnd() !== '----') fail('a query without its ---- line');
      i++;
      const rows: string[] = [];
      while (i < lines.length && lines[i]!.trim() !== '') rows.push(lines[i++]!.trimEnd());
      records.push({ kind: 'query', line, sql: text, types: words[1]!, rowsort: words.length === 3, rows });
    } else {
      fail(`not a record header: ${head}`);
    }
  }
  return { name, records };
}

/** Every `.slt` file of the corpus, in name order. */
export function loadLogicCorpus(): LogicFile[] {
  const dir = path.join(CORPUS_DIR, 'logic');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.slt'))
    .sort()
    .map((f) => parseLogic(f, readFileSync(path.join(dir, f), 'utf8')));
}

/** One result value as the corpus writes it. */
export function logicValue(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return v === '' ? '(empty)' : v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}
