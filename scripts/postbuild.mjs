// Copies the non-TypeScript assets the compiled code reads at run time (SQL migrations,
// generated Ohm bundles) from the source tree into dist/, keeping their relative paths.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
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

// A template PGlite cluster with every migration applied: PGlite's initdb takes seconds and the
// migrations most of one more, unpacking this takes about one, so a first `npm start` and every
// in-memory test store start from it (catalog/store/pglite-store.ts). Rebuilt when the migrations
// change (their digest is kept beside it); `migrate` at startup applies any the template lacks.
const templatePath = join(root, 'dist', 'catalog', 'store', 'pglite-template.tgz');
const stampPath = `${templatePath}.migrations`;
const migrationsDir = join(root, 'dist', 'catalog', 'store', 'migrations');
const digest = createHash('sha256');
for (const name of readdirSync(migrationsDir).sort()) digest.update(name).update(readFileSync(join(migrationsDir, name)));
const migrationsDigest = digest.digest('hex');
const stale = !existsSync(templatePath) || !existsSync(stampPath) || readFileSync(stampPath, 'utf8') !== migrationsDigest;
if (stale || process.env.FLOE_REBUILD_PGLITE_TEMPLATE) {
  const { PGlite } = await import('@electric-sql/pglite');
  const { migrate } = await import(join(root, 'dist', 'catalog', 'store', 'migrate.js'));
  const db = new PGlite();
  await db.waitReady;
  await migrate({
    transaction: (fn) => db.transaction((tx) => fn({
      query: async (sql, params) => {
        const r = await tx.query(sql, params);
        return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
      },
    })),
  });
  const dump = await db.dumpDataDir('gzip');
  await db.close();
  mkdirSync(dirname(templatePath), { recursive: true });
  writeFileSync(templatePath, Buffer.from(await dump.arrayBuffer()));
  writeFileSync(stampPath, migrationsDigest);
}
