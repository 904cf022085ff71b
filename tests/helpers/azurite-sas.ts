/**
 * What Azurite verifies of the blob-scoped SAS tokens Floe signs (`signSas` in
 * storage-creds/adls-vending.ts), the same whether the signer is the account key or a user
 * delegation key: the token reads its blob and no other, a read token cannot write, a tampered
 * signature, widened permissions and an expired token are refused, a read-write token writes and
 * deletes. Azurite checks container and blob SAS only (no hierarchical namespace, so no `sr=d`):
 * the directory SAS Floe vends is checked by each test by recomputing its signature.
 */
import { BlockBlobClient } from '@azure/storage-blob';
import type { Test } from 'tap';
import { signSas } from '../../storage-creds/adls-vending.js';
import type { AdlsSasKey } from '../../storage-creds/adls-presign.js';
import type { AzuriteStore } from './azurite.js';
import { trusting } from './self-signed.js';

/** `ok`, `denied` (a 403 from the store), or the status and message of any other failure. */
export async function sasOutcome(op: () => Promise<unknown>): Promise<string> {
  try {
    await op();
    return 'ok';
  } catch (e) {
    const status = (e as { statusCode?: number }).statusCode;
    return status === 403 ? 'denied' : `${status}: ${(e as Error).message}`;
  }
}

/** A client for blob `path` of `container` that authenticates with `sas` only (trusting Azurite's certificate over HTTPS). */
export function sasBlobClient(azurite: AzuriteStore, container: string, path: string, sas: string): BlockBlobClient {
  return new BlockBlobClient(`${azurite.endpoint}/${container}/${path.split('/').map(encodeURIComponent).join('/')}?${sas}`, undefined, {
    retryOptions: { maxTries: 1 }, ...(azurite.ca !== null ? trusting(azurite.ca) : {}),
  });
}

export interface BlobSasCheck {
  readonly azurite: AzuriteStore;
  readonly container: string;
  readonly signer: AdlsSasKey;
  /** A blob that exists and contains `"table-uuid"` (a table's metadata file): what the read token is for. */
  readonly table: string;
  /** Another table's blob that exists: the read token must not reach it. */
  readonly otherTable: string;
  /** A blob that the read-write token writes, then deletes. */
  readonly scratch: string;
  /** Whether the tokens allow http as well as https (Azurite over plain HTTP). */
  readonly allowHttp: boolean;
}

/** Asserts that Azurite accepts and refuses Floe's blob SAS tokens as Azure would (see the file comment). */
export async function checkBlobSasOnAzurite(t: Test, c: BlobSasCheck): Promise<void> {
  const blob = (path: string, sas: string): BlockBlobClient => sasBlobClient(c.azurite, c.container, path, sas);
  const sign = (path: string, mode: 'read' | 'read-write', nowMs: number, seconds: number): string =>
    signSas(c.signer, { kind: 'blob', filesystem: c.container, path }, mode, nowMs, seconds, c.allowHttp).token;
  const read = sign(c.table, 'read', Date.now(), 900);
  t.match((await blob(c.table, read).downloadToBuffer()).toString(), /"table-uuid"/, 'the SAS reads the table\'s blob');
  t.equal(await sasOutcome(() => blob(c.otherTable, read).downloadToBuffer()), 'denied', 'not another table\'s blob');
  t.equal(await sasOutcome(() => blob(c.table, read).upload('x', 1)), 'denied', 'a read SAS cannot write');
  const sig = new URLSearchParams(read).get('sig')!;
  const flipped = `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
  t.equal(await sasOutcome(() => blob(c.table, read.replace(encodeURIComponent(sig), encodeURIComponent(flipped))).downloadToBuffer()), 'denied', 'a tampered signature is refused');
  t.equal(await sasOutcome(() => blob(c.table, read.replace('sp=r', 'sp=rw')).upload('x', 1)), 'denied', 'widened permissions are refused');
  const expired = sign(c.table, 'read', Date.now() - 3_600_000, 300);
  t.equal(await sasOutcome(() => blob(c.table, expired).downloadToBuffer()), 'denied', 'an expired SAS is refused');
  const write = sign(c.scratch, 'read-write', Date.now(), 900);
  t.equal(await sasOutcome(() => blob(c.scratch, write).upload('rows', 4)), 'ok', 'a read-write SAS writes');
  t.equal(await sasOutcome(() => blob(c.scratch, write).delete()), 'ok', 'and deletes');
}
