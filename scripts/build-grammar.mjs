// Generates the Ohm grammar bundles (with TypeScript types) for every .ohm file under grammar/.
// Owned by the grammar context; a no-op while there is no grammar file.
import { readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const files = readdirSync(`${root}/grammar`).filter((f) => f.endsWith('.ohm'));
if (files.length > 0) {
  execFileSync(process.execPath, [`${root}/node_modules/@ohm-js/cli/index.js`, 'generateBundles', '--withTypes', '--esm', ...files.map((f) => `grammar/${f}`)], { cwd: root, stdio: 'inherit' });
}
