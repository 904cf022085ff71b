// Rewrites the registry table of docs/errors.md from grammar/errors.ts (compiled): run it after
// adding an error code (`npm run build && node scripts/errors-doc.mjs`). A test keeps the two in step.
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const { ERRORS } = await import(`${root}/dist/grammar/errors.js`);
const BEGIN = '<!-- registry:begin -->';
const END = '<!-- registry:end -->';
const rows = Object.entries(ERRORS).map(([code, d]) => `| \`${code}\` | \`${d.sqlState}\` | ${d.httpStatus} |`);
const table = ['| code | SQLSTATE | HTTP status |', '|---|---|---|', ...rows].join('\n');
const path = `${root}/docs/errors.md`;
const doc = readFileSync(path, 'utf8');
const start = doc.indexOf(BEGIN);
const end = doc.indexOf(END);
if (start < 0 || end < 0) throw new Error(`docs/errors.md lacks the ${BEGIN} … ${END} markers`);
writeFileSync(path, `${doc.slice(0, start + BEGIN.length)}\n${table}\n${doc.slice(end)}`);
