/**
 * `floe sql` PUT throughput to a stage on RGW against a raw SDK upload of the same file, in one
 * run (issue 19: "PUT throughput reported against a raw SDK upload").
 *
 * - Floe: `floe sql -c "PUT file://… @stage"` as a real process (its start, sign-in, the presign
 *   round trips, then the parts straight to RGW through the presigned URLs: 16 MiB parts, 4 at a
 *   time, the shell's defaults).
 * - Baseline: `@aws-sdk/client-s3` with the catalog's keys, the same multipart shape (16 MiB parts,
 *   4 in flight, each streamed from the file with its length), in this process.
 * - Also reported: the same PUT to a `file://` warehouse (Floe receives the bytes itself).
 *
 * The two RGW runs alternate (`--rounds`, default 3) and each side's median is compared, so a
 * busy machine slows both. Target: Floe's time ≤ 1.3× the SDK's (the extra is the process start,
 * reported as `cli_start_ms`, and a few HTTP round trips to Floe). `--mib` sets the file size
 * (default 256).
 */
import { spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { openStore } from '../catalog/store/open-store.js';
import { startRgw } from '../tests/helpers/rgw.js';
import { startTestServer, TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../tests/helpers/server.js';
import { listenOnLoopback } from '../tests/helpers/http.js';
import { CLI } from '../tests/helpers/cli.js';
import { atMost, writeBenchResult } from './report.js';

const MIB = 1024 * 1024;
const PART = 16 * MIB;
const CONCURRENCY = 4;

const { values } = parseArgs({ options: { mib: { type: 'string' }, rounds: { type: 'string' } } });
const mib = Number(values.mib ?? 256);
const rounds = Number(values.rounds ?? 3);

function floeSql(url: string, args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'sql', '--url', url, '--client-id', TEST_CLIENT_ID, '--client-secret', TEST_CLIENT_SECRET, ...args], { env: { ...process.env, FLOE_CONFIG: '/nonexistent' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'floe-bench-put-'));
const rgw = await startRgw();
try {
  const file = join(dir, 'data.bin');
  const size = mib * MIB;
  const handle = await open(file, 'w');
  const block = randomBytes(MIB);
  for (let i = 0; i < mib; i++) {
    block.writeUInt32BE(i, 0);
    await handle.write(block);
  }
  await handle.close();

  await rgw.createBucket('benchput');
  const server = await startTestServer(await openStore({ kind: 'pglite-memory' }), { config: (c) => ({ ...c, data_dir: join(dir, 'data') }) });
  const http = await listenOnLoopback(server);
  await server.state.catalog.createCatalog({ tenantId: 'default', principalId: 'bench', roles: ['tenant_admin'] }, {
    name: 'lake', warehouseLocation: 's3://benchput/wh',
    storage: {
      profile: { type: 's3', bucket: 'benchput', keyPrefix: 'wh', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
      secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    },
  });
  for (const catalog of ['lake', 'default']) {
    const setup = await floeSql(http.url, ['--catalog', catalog, '-c', 'CREATE STAGE put_bench']);
    if (setup.code !== 0) throw new Error(setup.stderr);
  }
  // As the S3 FileIO: no flexible-checksum trailers (RGW 16 answers a streamed, trailered part with 411).
  const s3 = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });

  const sdkUpload = async (key: string): Promise<void> => {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'benchput', Key: key }));
    const count = Math.ceil(size / PART);
    const parts: { PartNumber: number; ETag: string | undefined }[] = new Array(count);
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        const length = Math.min(PART, size - i * PART);
        const r = await s3.send(new UploadPartCommand({
          Bucket: 'benchput', Key: key, UploadId, PartNumber: i + 1, ContentLength: length,
          Body: createReadStream(file, { start: i * PART, end: i * PART + length - 1 }),
        }));
        parts[i] = { PartNumber: i + 1, ETag: r.ETag };
      }
    }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'benchput', Key: key, UploadId, MultipartUpload: { Parts: parts } }));
  };
  const timed = async (f: () => Promise<void>): Promise<number> => {
    const started = performance.now();
    await f();
    return performance.now() - started;
  };
  const floePut = (catalog: string) => async (): Promise<void> => {
    const r = await floeSql(http.url, ['--catalog', catalog, '-c', `PUT file://${file} @put_bench`]);
    if (r.code !== 0) throw new Error(r.stderr);
  };

  // What a floe sql process costs before it sends a byte: starting node and loading the CLI.
  const startMs = median(await Promise.all([0].map(async () => timed(async () => {
    await new Promise<void>((resolve) => spawn(process.execPath, [CLI, 'sql', '--help'], { stdio: 'ignore' }).on('exit', () => resolve()));
  }))));
  const sdkMs: number[] = [];
  const floeMs: number[] = [];
  const localMs: number[] = [];
  for (let i = 0; i < rounds; i++) {
    sdkMs.push(await timed(() => sdkUpload(`raw/data-${i}.bin`)));
    await s3.send(new DeleteObjectCommand({ Bucket: 'benchput', Key: `raw/data-${i}.bin` }));
    floeMs.push(await timed(floePut('lake')));
    localMs.push(await timed(floePut('default')));
  }
  s3.destroy();
  await server.close();

  const mibps = (ms: number) => mib / (ms / 1000);
  const ratio = median(floeMs) / median(sdkMs);
  writeBenchResult('stage-put', {
    file_mib: mib, rounds, cli_start_ms: Math.round(startMs), part_mib: PART / MIB, concurrency: CONCURRENCY,
    sdk_ms: sdkMs.map(Math.round), floe_rgw_ms: floeMs.map(Math.round), floe_file_ms: localMs.map(Math.round),
    sdk_mib_per_s: Math.round(mibps(median(sdkMs))), floe_rgw_mib_per_s: Math.round(mibps(median(floeMs))), floe_file_mib_per_s: Math.round(mibps(median(localMs))),
  }, { floe_put_vs_sdk: atMost(Math.round(ratio * 100) / 100, 1.3) },
  `${mib} MiB PUT to RGW: floe sql ${Math.round(mibps(median(floeMs)))} MiB/s vs raw SDK ${Math.round(mibps(median(sdkMs)))} MiB/s (${ratio.toFixed(2)}x time, of which ${Math.round(startMs)} ms starting the CLI); to file:// ${Math.round(mibps(median(localMs)))} MiB/s`);
} finally {
  await rgw.stop();
  rmSync(dir, { recursive: true, force: true });
}
