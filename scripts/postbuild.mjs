// Copies the non-TypeScript assets the compiled code reads at run time (SQL migrations,
// generated Ohm bundles) from the source tree into dist/, keeping their relative paths.
import { cpSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const roots = ['grammar', 'engine', 'server', 'catalog', 'storage-creds'];
const wanted = (name) => name.endsWith('.sql') || name.endsWith('.ohm-bundle.js') || name.endsWith('.ohm');

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (wanted(name)) {
      const target = join(root, 'dist', relative(root, path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
for (const r of roots) {
  try { walk(join(root, r)); } catch (e) { if (e.code !== 'ENOENT') throw e; }
}
