/** How a multipart upload is cut (`planParts`, `partLength`): pure, so every refusal is checked here. */
import t from 'tap';
import { isFloeError } from '../../grammar/errors.js';
import { partLength, planParts } from './uploads.js';

const MIB = 1024 * 1024;
const local = { maxPartBytes: 5000 * MIB, maxTotalBytes: 50_000 * MIB, minPartBytes: 1, sizeRequired: false };
const s3 = { ...local, minPartBytes: 5 * MIB, sizeRequired: true };
const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (isFloeError(e)) return e.message;
    throw e;
  }
  throw new Error('expected a refusal');
};

t.test('size and part_size: every part that size but the last', async (t) => {
  const plan = planParts({ size: 12 * MIB, partSize: 5 * MIB }, s3);
  t.same(plan, { parts: 3, size: 12 * MIB, partSize: 5 * MIB });
  t.same([1, 2, 3].map((n) => partLength(plan, n)), [5 * MIB, 5 * MIB, 2 * MIB]);
  t.same(planParts({ size: 10 * MIB, partSize: 5 * MIB }, s3).parts, 2, 'an exact multiple has no empty last part');
  t.same(planParts({ size: 100 }, s3), { parts: 1, size: 100, partSize: 100 }, 'one small part is fine on S3');
  t.same(planParts({ size: 40 * MIB }, s3), { parts: 3, size: 40 * MIB, partSize: 16 * MIB }, '16 MiB parts by default');
  t.same(planParts({ size: 10, parts: 3 }, local), { parts: 3, size: 10, partSize: 4 });
  t.same(planParts({ parts: 3 }, local), { parts: 3 }, 'parts alone on file://');
  t.equal(partLength({ parts: 3 }, 1), undefined);
});

t.test('refusals name the field', async (t) => {
  t.match(refusal(() => planParts({ parts: 3 }, s3)), /size: .*required on object storage/);
  t.match(refusal(() => planParts({ size: 12 * MIB, partSize: MIB }, s3)), /part_size: .*at least 5242880/);
  t.match(refusal(() => planParts({ size: 9, parts: 4 }, local)), /parts: 9 bytes in parts of 3 bytes make 3 parts, not 4/);
  t.match(refusal(() => planParts({ size: 10, parts: 2, partSize: 3 }, local)), /make 4 parts, not 2/);
  t.match(refusal(() => planParts({ size: 20_000, partSize: 1 }, local)), /over 10000/);
  t.match(refusal(() => planParts({ size: 60_000 * MIB }, local)), /size: .*over the limit/);
  t.match(refusal(() => planParts({ size: 6000 * MIB, partSize: 6000 * MIB }, local)), /part_size: .*over the part limit/);
  t.match(refusal(() => planParts({ partSize: 5 }, local)), /part_size: needs the total size/);
  t.match(refusal(() => planParts({}, local)), /parts: /);
  t.match(refusal(() => planParts({ parts: 0 }, local)), /parts: must be a positive integer/);
  t.match(refusal(() => planParts({ parts: 10_001 }, local)), /parts: /);
  t.match(refusal(() => planParts({ size: -1 }, local)), /size: must be a positive integer/);
  t.match(refusal(() => planParts({ size: 1.5 }, local)), /size: /);
});

t.test('chunks that must be multiples of a quantum (GCS resumable sessions: 256 KiB)', async (t) => {
  const gcs = { ...s3, minPartBytes: 256 * 1024, partMultipleOf: 256 * 1024 };
  t.same(planParts({ size: 12 * MIB + 100, partSize: 5 * MIB }, gcs), { parts: 3, size: 12 * MIB + 100, partSize: 5 * MIB }, 'the last chunk is the rest');
  t.same(planParts({ size: 100 }, gcs), { parts: 1, size: 100, partSize: 100 }, 'a single chunk of any size');
  t.match(refusal(() => planParts({ size: 12 * MIB, partSize: 5 * MIB + 1 }, gcs)), /part_size: .*multiple of 262144/);
  t.match(refusal(() => planParts({ size: 10 * MIB, parts: 3 }, gcs)), /multiple of 262144/, 'parts that divide the size unevenly');
  t.match(refusal(() => planParts({ size: MIB, partSize: 128 * 1024 }, gcs)), /at least 262144/);
});
