/**
 * Secret material: generation, one-way digests, constant-time comparison. Client secrets, PATs,
 * refresh and invitation tokens are high-entropy random strings, so a plain SHA-256 is the right
 * digest for them (no salt or slow hash needed); passwords use Argon2id elsewhere.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random token: `prefix` + 32 random bytes in base64url (256 bits). */
export function newSecret(prefix: string, bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** A random identifier that is not secret (client ids): `prefix` + 16 random bytes in hex. */
export function newIdentifier(prefix: string): string {
  return prefix + randomBytes(12).toString('hex');
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Compares a presented secret with a stored SHA-256 digest in constant time. */
export function secretMatchesDigest(presented: string, digest: Uint8Array): boolean {
  const candidate = sha256(presented);
  return digest.length === candidate.length && timingSafeEqual(candidate, digest);
}
