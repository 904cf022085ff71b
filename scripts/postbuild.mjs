// Copies the non-TypeScript assets the compiled code reads at run time (SQL migrations,
// generated Ohm bundles) from the source tree into dist/, keeping their relative paths.
import { cpSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
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

// A template PGlite cluster: PGlite's initdb takes seconds, unpacking this takes about one, so a
// first `npm start` and every in-memory test store start from it (catalog/store/pglite-store.ts).
const templatePath = join(root, 'dist', 'catalog', 'store', 'pglite-template.tgz');
if (!existsSync(templatePath) || process.env.FLOE_REBUILD_PGLITE_TEMPLATE) {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = new PGlite();
  await db.waitReady;
  const dump = await db.dumpDataDir('gzip');
  await db.close();
  mkdirSync(dirname(templatePath), { recursive: true });
  writeFileSync(templatePath, Buffer.from(await dump.arrayBuffer()));
}
