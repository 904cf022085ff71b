/** Blob SAS signing (`signBlobSas`): what it grants and refuses, without a store (Azurite checks the signatures: tests/loading/stage-uploads-azurite.test.ts). */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { AdlsPresigner, blobSasPermissions, signBlobSas, type AdlsSasKey } from './adls-presign.js';

const shared: AdlsSasKey = { kind: 'shared-key', accountName: 'acct', accountKey: randomBytes(64).toString('base64') };
const now = Date.parse('2026-03-01T12:00:00Z');
const blob = { container: 'wh', name: 'stages/x/in/a.csv' };

t.test('a blob SAS: sr=b, the grant, the times, https unless allowed', async (t) => {
  const up = new URLSearchParams(signBlobSas(shared, blob, 'upload', { now, expiresInSeconds: 900 }, false));
  t.equal(up.get('sr'), 'b');
  t.equal(up.get('sp'), 'cw');
  t.equal(up.get('spr'), 'https');
  t.equal(up.get('se'), '2026-03-01T12:15:00Z');
  t.equal(up.get('st'), '2026-03-01T11:55:00Z', 'five minutes back, for clock skew');
  t.ok(up.get('sig'));
  t.equal(new URLSearchParams(signBlobSas(shared, blob, 'upload', { now, expiresInSeconds: 900 }, true)).get('spr'), 'https,http');
  t.equal(blobSasPermissions('download'), 'r');
  t.not(signBlobSas(shared, blob, 'upload', { now, expiresInSeconds: 900 }, false), signBlobSas(shared, { ...blob, name: 'stages/x/in/b.csv' }, 'upload', { now, expiresInSeconds: 900 }, false), 'the blob name is signed');
});

t.test('refusals: no blob, a folder, dot segments, a life outside 1 s to 7 days', async (t) => {
  const time = { now, expiresInSeconds: 60 };
  t.throws(() => signBlobSas(shared, { container: 'wh', name: '' }, 'upload', time, false), /one blob/);
  t.throws(() => signBlobSas(shared, { container: 'wh', name: 'stages/x/' }, 'upload', time, false), /one blob/);
  t.throws(() => signBlobSas(shared, { container: 'wh', name: 'stages/../x' }, 'upload', time, false), /\.\./);
  t.throws(() => signBlobSas(shared, blob, 'upload', { now, expiresInSeconds: 0 }, false), RangeError);
  t.throws(() => signBlobSas(shared, blob, 'upload', { now, expiresInSeconds: 7 * 24 * 3600 + 1 }, false), RangeError);
});

t.test('a user-delegation key signs a user-delegation SAS that may not outlive the key', async (t) => {
  const key = {
    signedObjectId: '11111111-1111-1111-1111-111111111111', signedTenantId: '22222222-2222-2222-2222-222222222222',
    signedStartsOn: new Date(now - 60_000), signedExpiresOn: new Date(now + 3600_000), signedService: 'b', signedVersion: '2025-01-05',
    value: randomBytes(32).toString('base64'),
  };
  const delegated: AdlsSasKey = { kind: 'user-delegation', accountName: 'acct', key };
  const sas = new URLSearchParams(signBlobSas(delegated, blob, 'upload', { now, expiresInSeconds: 900 }, false));
  t.equal(sas.get('skoid'), key.signedObjectId, 'the delegation key’s identity is in the SAS');
  t.equal(sas.get('sp'), 'cw');
  t.throws(() => signBlobSas(delegated, blob, 'upload', { now, expiresInSeconds: 7200 }, false), /outlive/);
});

t.test('block ids: one length for every part of an upload, distinct per part and per upload', async (t) => {
  const a = AdlsPresigner.blockId('0'.repeat(32), 1);
  t.equal(Buffer.from(a, 'base64').toString(), `floe-${'0'.repeat(32)}-00001`);
  t.equal(AdlsPresigner.blockId('0'.repeat(32), 10_000).length, a.length);
  t.not(AdlsPresigner.blockId('1'.repeat(32), 1), a);
});
