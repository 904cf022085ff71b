/**
 * MurmurHash3 x86 32-bit, the hash behind the `bucket[N]` transform (table spec Appendix B, seed 0).
 * Guava's `Hashing.murmur3_32_fixed()`, which Java Iceberg uses, gives the same results.
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function mixK1(k1: number): number {
  k1 = Math.imul(k1, C1);
  k1 = (k1 << 15) | (k1 >>> 17);
  return Math.imul(k1, C2);
}

function mixH1(h1: number, k1: number): number {
  h1 ^= k1;
  h1 = (h1 << 13) | (h1 >>> 19);
  return (Math.imul(h1, 5) + 0xe6546b64) | 0;
}

function finalMix(h1: number, length: number): number {
  h1 ^= length;
  h1 ^= h1 >>> 16;
  h1 = Math.imul(h1, 0x85ebca6b);
  h1 ^= h1 >>> 13;
  h1 = Math.imul(h1, 0xc2b2ae35);
  h1 ^= h1 >>> 16;
  return h1 | 0;
}

/** murmur3_x86_32 of `bytes` with `seed` (default 0), as a signed 32-bit integer like Java's `int`. */
export function murmur3Hash32(bytes: Uint8Array, seed = 0): number {
  let h1 = seed | 0;
  const len = bytes.length;
  const blocks = len & ~3;
  for (let i = 0; i < blocks; i += 4) {
    const k1 = (bytes[i] as number) | ((bytes[i + 1] as number) << 8) | ((bytes[i + 2] as number) << 16) | ((bytes[i + 3] as number) << 24);
    h1 = mixH1(h1, mixK1(k1));
  }
  const tail = len & 3;
  if (tail > 0) {
    let k1 = 0;
    if (tail === 3) k1 ^= (bytes[blocks + 2] as number) << 16;
    if (tail >= 2) k1 ^= (bytes[blocks + 1] as number) << 8;
    k1 ^= bytes[blocks] as number;
    h1 ^= mixK1(k1);
  }
  return finalMix(h1, len);
}

/** Hash of a long as its 8-byte little-endian form (spec `hashLong`). */
export function hashLong(value: bigint): number {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(BigInt.asIntN(64, value));
  return murmur3Hash32(b);
}

/** Hash of an int: widened to long first so that int → long promotion keeps bucket values (spec `hashInt`). */
export function hashInt(value: number): number {
  return hashLong(BigInt(value));
}

/** Hash of a string: its UTF-8 bytes. */
export function hashString(value: string): number {
  return murmur3Hash32(Buffer.from(value, 'utf8'));
}
