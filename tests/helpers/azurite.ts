/**
 * A throwaway Azure Blob store for tests: Azurite (npm `azurite`, Microsoft's emulator), blob
 * service only, started per suite on a free loopback port with a fresh data directory and removed
 * after it. Azurite checks Shared Key signatures and service SAS signatures (container and blob
 * SAS: permissions, expiry, signature) the way Azure does, which an in-process fake would not.
 *
 * The store runs with a generated account and key (`AZURITE_ACCOUNTS`), not Azurite's well-known
 * `devstoreaccount1` key, so a test can look for the key in responses and logs. Azurite addresses
 * accounts path-style (`http://127.0.0.1:<port>/<account>/<container>/<blob>`); Floe's locations
 * stay `abfss://<container>@<account>.dfs.core.windows.net/…` and the profile's `endpoint` points
 * the FileIO at the emulator, as it would at a private endpoint.
 *
 * With `oauth`, Azurite serves HTTPS with the given certificate and also accepts Entra ID bearer
 * tokens (`--oauth basic`, which it allows over HTTPS only). In that mode it checks a token's
 * issuer (`https://sts.windows.net/…` and the other Entra ID issuers), audience
 * (`https://storage.azure.com` or the account's blob host) and lifetime, not its signature nor any
 * role assignment; it serves Get User Delegation Key (a key derived from the token's `oid` and
 * `tid`) and verifies user-delegation SAS tokens for containers and blobs (docs/storage.md).
 *
 * Without the package (or when the emulator cannot start) `onAzurite` skips locally and fails with
 * CI=true, exactly as `onRgw` does for RGW.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import type { Test } from 'tap';
import { onThrowawayService } from './throwaway-service.js';
import type { ParsedStorageProfile } from '../../catalog/rest/operations/catalogs/common.js';
import { trusting } from './self-signed.js';

/** A bound for an emulator that never listens, not a speed target: a loaded machine may need minutes. */
const STARTUP_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 5_000;

export interface AzuriteStore {
  /** The account's blob service URL: `http://127.0.0.1:<port>/<account>` (`https://` with `oauth`). */
  readonly endpoint: string;
  /** The certificate a client must trust (with `oauth`), or null over plain HTTP. */
  readonly ca: string | null;
  readonly accountName: string;
  /** The account key (base64), what Shared Key signs with. */
  readonly accountKey: string;
  /** The data directory (and `azurite.log`). */
  readonly dir: string;
  /** An SDK client for the account with its Shared Key. */
  client(): BlobServiceClient;
  createContainer(name: string): Promise<void>;
  /** Stops the emulator (to test an unreachable store); `stop` still cleans up. */
  stopServer(): Promise<void>;
  /** Stops the emulator and removes the directory. Idempotent. */
  stop(): Promise<void>;
}

function azuriteBlobMain(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    return path.join(path.dirname(require.resolve('azurite/package.json')), 'dist', 'src', 'blob', 'main.js');
  } catch {
    return undefined;
  }
}

/** Why the emulator cannot run here, or undefined when the package is installed. */
export function azuriteUnavailableReason(): string | undefined {
  return azuriteBlobMain() === undefined ? 'Azurite is not installed (npm install: it is a devDependency)' : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface StartAzuriteOptions {
  /** Account name (3-24 lowercase letters and digits). Default `floetest`. */
  readonly accountName?: string;
  /** Serve HTTPS with this certificate (PEM files; `ca` is the certificate's text) and accept bearer tokens (`--oauth basic`). */
  readonly oauth?: { readonly certFile: string; readonly keyFile: string; readonly ca: string };
}

/** Whether something answers HTTPS at `url` with a certificate `ca` vouches for (any status). */
function httpsAnswers(url: string, ca: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, timeout: 2000 }, (res) => {
      res.resume();
      res.once('end', () => resolve());
    });
    req.once('timeout', () => req.destroy(new Error('timeout')));
    req.once('error', reject);
    req.end();
  });
}

/** Starts Azurite's blob service and returns once it answers. */
export async function startAzurite(options: StartAzuriteOptions = {}): Promise<AzuriteStore> {
  const main = azuriteBlobMain();
  if (main === undefined) throw new Error(azuriteUnavailableReason());
  const dir = mkdtempSync(path.join(tmpdir(), 'floe-azurite-'));
  const accountName = options.accountName ?? 'floetest';
  const accountKey = randomBytes(64).toString('base64');
  const port = await freePort();
  const logFile = path.join(dir, 'azurite.log');
  const out = createWriteStream(logFile);
  const child: ChildProcess = spawn(process.execPath, [
    main, '--blobHost', '127.0.0.1', '--blobPort', String(port), '--location', path.join(dir, 'data'),
    '--disableTelemetry', '--skipApiVersionCheck', '--silent',
    ...(options.oauth !== undefined ? ['--oauth', 'basic', '--cert', options.oauth.certFile, '--key', options.oauth.keyFile] : []),
  ], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AZURITE_ACCOUNTS: `${accountName}:${accountKey}` } });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  // A test process that dies without teardown must not leave the emulator behind.
  process.once('exit', kill);
  const stopServer = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await stopServer();
    process.removeListener('exit', kill);
    rmSync(dir, { recursive: true, force: true });
  };
  const logTail = (): string => {
    try {
      return readFileSync(logFile, 'utf8').split('\n').filter((l) => l.trim() !== '').slice(-8).join('\n');
    } catch {
      return '';
    }
  };
  const ca = options.oauth?.ca ?? null;
  const endpoint = `${ca === null ? 'http' : 'https'}://127.0.0.1:${port}/${accountName}`;
  const client = (): BlobServiceClient => new BlobServiceClient(endpoint, new StorageSharedKeyCredential(accountName, accountKey), {
    retryOptions: { maxTries: 1 }, ...(ca !== null ? trusting(ca) : {}),
  });
  try {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`Azurite exited (${child.exitCode ?? child.signalCode}): ${logTail()}`);
      try {
        // Any HTTP answer means it listens (an unsigned request is refused with 403).
        if (ca !== null) {
          await httpsAnswers(`${endpoint}?comp=list`, ca);
        } else {
          const r = await fetch(`${endpoint}?comp=list`, { signal: AbortSignal.timeout(2000) });
          await r.arrayBuffer();
        }
        break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error(`Azurite did not answer within ${STARTUP_TIMEOUT_MS} ms: ${logTail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return {
      endpoint, ca, accountName, accountKey, dir, client,
      async createContainer(name) {
        await client().getContainerClient(name).create();
      },
      stopServer,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Runs `body` as a subtest with a fresh Azurite started for it and stopped after it. The subtest is
 * skipped (locally) or failed (CI=true) when the emulator cannot start, with the reason.
 */
export async function onAzurite(t: Test, name: string, body: (t: Test, azurite: AzuriteStore) => Promise<void>, options: StartAzuriteOptions = {}): Promise<void> {
  return onThrowawayService(t, name, { what: 'Azurite', unavailableReason: azuriteUnavailableReason, start: () => startAzurite(options) }, body);
}

/** The host part of the locations a test warehouse uses (as on Azure; the endpoint goes to Azurite). */
export const AZURITE_DFS_SUFFIX = 'dfs.core.windows.net';

/**
 * The `storage-profile` body of `POST /v1/catalogs` for a catalog whose warehouse is container
 * `container` on a running Azurite, reached with the account's Shared Key. Its warehouse location
 * is `abfss://<container>@<account>.dfs.core.windows.net/<keyPrefix>`. `overrides` replaces fields.
 */
export function azuriteStorageProfile(azurite: AzuriteStore, container: string, keyPrefix = 'warehouse', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'adls', 'account-name': azurite.accountName, filesystem: container, 'key-prefix': keyPrefix, endpoint: azurite.endpoint,
    credentials: { type: 'shared-key', 'account-key': azurite.accountKey },
    ...overrides,
  };
}

/**
 * The same for `CatalogService.createCatalog` / `floe.state.catalog.createCatalog` (the parsed
 * form): `{warehouseLocation, storage}` to spread into a create request.
 */
export function azuriteCatalogStorage(azurite: AzuriteStore, container: string, keyPrefix = 'warehouse'): { readonly warehouseLocation: string; readonly storage: ParsedStorageProfile } {
  return {
    warehouseLocation: `abfss://${container}@${azurite.accountName}.${AZURITE_DFS_SUFFIX}${keyPrefix === '' ? '' : `/${keyPrefix}`}`,
    storage: {
      profile: {
        type: 'adls', accountName: azurite.accountName, filesystem: container, keyPrefix, endpointSuffix: 'core.windows.net',
        endpoint: azurite.endpoint, hierarchicalNamespace: false, credentialSource: 'shared-key',
      },
      secret: { type: 'adls-shared-key', accountKey: azurite.accountKey },
    },
  };
}
