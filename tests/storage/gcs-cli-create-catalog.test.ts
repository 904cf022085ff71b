/**
 * `floe admin create-catalog` with a `gcs` storage profile from a file, against the GCS checking
 * server (no GCS emulator runs here): the profile is probed like `POST /v1/catalogs` does, a key the
 * token endpoint does not know is refused (exit 2) with the cause and without the key, and a good
 * one is stored with its key sealed. The CLI runs as its own process (asynchronously: the checking
 * server answers from this one).
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../catalog/store/open-store.js';
import { CLI } from '../helpers/cli.js';
import { gcsStorageProfile, startGcsCheckingServer } from '../helpers/gcs-checking-server.js';

function run(args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Generous: a CLI start (build, store, probe) has taken over 60 s on a loaded CI machine.
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

t.test('create-catalog with a gcs profile from the CLI', async (t) => {
  const gcs = await startGcsCheckingServer();
  t.teardown(() => gcs.close());
  gcs.createBucket('clibucket');
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-cli-gcs-'));
  const common = ['--data-dir', dataDir];
  const profileFile = (name: string, overrides: Record<string, unknown> = {}): string => {
    const file = join(dataDir, `${name}.json`);
    writeFileSync(file, JSON.stringify(gcsStorageProfile(gcs, 'clibucket', name, overrides)));
    return file;
  };
  const keyLine = gcs.serviceAccountKey.private_key.split('\n')[1] as string;

  const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const bad = await run(['admin', 'create-catalog', 'wrong', '--storage-profile', profileFile('wrong', { credentials: { type: 'service-account-key', 'service-account-key': { ...gcs.serviceAccountKey, private_key: otherKey } } }), ...common]);
  t.equal(bad.status, 2, 'a profile that fails its check: exit 2');
  t.match(bad.stderr, /Storage profile check failed: could not write a probe object: the token endpoint refused the service account/);
  t.notMatch(bad.stderr + bad.stdout, /PRIVATE KEY/, 'the key is not printed');

  const good = await run(['admin', 'create-catalog', 'lake', '--storage-profile', profileFile('lake'), ...common]);
  t.equal(good.status, 0, good.stderr);
  t.match(good.stdout, /Catalog lake created in tenant default: gs:\/\/clibucket\/lake \(storage profile checked\)/);
  t.notMatch(good.stdout + good.stderr, /PRIVATE KEY/);
  t.same(gcs.objectNames('clibucket'), [], 'the probe object was written and deleted');
  t.ok(gcs.requests.some((r) => r.method === 'POST' && r.token === 'service-account' && (r.query.name ?? '').startsWith('lake/.floe-probe-')), 'the probe went through the checking server with the key\'s token');

  const store = await openStore({ kind: 'pglite', dataDir });
  t.teardown(() => store.close());
  const row = (await store.query<{ warehouse_location: string; storage_secret_sealed: string }>("SELECT warehouse_location, storage_secret_sealed FROM catalogs WHERE name = 'lake'")).rows[0];
  t.equal(row?.warehouse_location, 'gs://clibucket/lake');
  t.ok(row?.storage_secret_sealed.startsWith('v1:') && !row.storage_secret_sealed.includes(keyLine), 'the key is sealed');
});
