// Builds the web console (console/): type-checks its TypeScript against the DOM library, bundles
// console/src/main.ts with esbuild into one minified ES module, and copies the page shell and the
// style sheet into dist/console/, where server/routes/console.ts serves them from.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'dist', 'console');
execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'console', 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
await build({
  entryPoints: [join(root, 'console', 'src', 'main.ts')],
  bundle: true,
  format: 'esm',
  target: ['chrome120', 'firefox120'],
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  outfile: join(out, 'assets', 'app.js'),
  logLevel: 'warning',
});
cpSync(join(root, 'console', 'index.html'), join(out, 'index.html'));
cpSync(join(root, 'console', 'console.css'), join(out, 'assets', 'console.css'));
