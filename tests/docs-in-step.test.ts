/**
 * Documentation that must stay in step with the code: the error registry table of docs/errors.md
 * (regenerate with `node scripts/errors-doc.mjs`), the documents the README points to, and the
 * README's claim to start with the two commands.
 */
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ERRORS } from '../grammar/errors.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const errorsDoc = readFileSync(`${root}docs/errors.md`, 'utf8');

t.test('every registry code is documented with its SQLSTATE and status, and nothing else is', async (t) => {
  const documented = new Map<string, string>();
  for (const m of errorsDoc.matchAll(/^\| `([A-Za-z_]+)` \| `([0-9A-Z]{5})` \| (\d{3}) \|$/gm)) documented.set(m[1]!, `${m[2]} ${m[3]}`);
  for (const [code, d] of Object.entries(ERRORS)) t.equal(documented.get(code), `${d.sqlState} ${d.httpStatus}`, code);
  t.same([...documented.keys()].filter((c) => !(c in ERRORS)), [], 'no stale rows');
});

t.test('the documents the README names exist', async (t) => {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  t.match(readme.slice(0, 1500), /npm ci && npm start/, 'the quick start is at the top');
  for (const m of readme.matchAll(/`(docs\/[a-z-]+\.md)`/g)) t.ok(existsSync(`${root}${m[1]}`), m[1]!);
});
