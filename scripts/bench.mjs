// `npm run bench -- <name>` builds nothing by itself: it runs the compiled benchmark
// dist/bench/<name>.js (run `npm run build` first, as `npm test` does).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;
const name = process.argv[2];
const available = existsSync(`${root}/dist/bench`)
  ? readdirSync(`${root}/dist/bench`).filter((f) => f.endsWith('.js') && !f.includes('.test.') && f !== 'report.js').map((f) => f.slice(0, -3))
  : [];
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <name>   (available: ${available.join(', ') || 'none; run npm run build'})`);
  process.exit(2);
}
const r = spawnSync(process.execPath, [`${root}/dist/bench/${name}.js`, ...process.argv.slice(3)], { stdio: 'inherit', cwd: root });
process.exit(r.status ?? 1);
