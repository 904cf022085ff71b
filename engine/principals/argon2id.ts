/**
 * The Argon2id primitives (t=3, m=64 MiB, p=1, as the spec fixes), shared by the hashing child
 * processes (argon2id-child.ts) and the in-process fallback. Kept apart from passwords.ts so a
 * child loads the binding and nothing else. Hashes are canonical PHC strings
 * (`$argon2id$v=19$m=65536,t=3,p=1$…`).
 */
import argon2 from 'argon2';

export const ARGON2_PARAMETERS = { type: argon2.argon2id, timeCost: 3, memoryCost: 65536, parallelism: 1 } as const;

/** Hashes a password; the PHC parameters are written in the reference order m, t, p. */
export async function hashPassword(password: string): Promise<string> {
  return canonicalPhc(await argon2.hash(password, ARGON2_PARAMETERS));
}

/** Verifies in constant time (inside argon2); a malformed hash verifies nothing. */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

/** Rewrites `m=…,p=…,t=…` (the binding's order) as `m=…,t=…,p=…` (the reference order). */
export function canonicalPhc(hash: string): string {
  const parts = hash.split('$');
  if (parts.length < 5) return hash;
  const params = new Map(parts[3]!.split(',').map((kv) => kv.split('=') as [string, string]));
  const order = ['m', 't', 'p'];
  if (!order.every((k) => params.has(k)) || params.size !== 3) return hash;
  parts[3] = order.map((k) => `${k}=${params.get(k)}`).join(',');
  return parts.join('$');
}

/** One Argon2id computation, as the pool sends it to a child (the password travels over IPC only). */
export type Argon2idJob =
  | { readonly kind: 'hash'; readonly password: string }
  | { readonly kind: 'verify'; readonly hash: string; readonly password: string };

/** What a job yields: a PHC string for `hash`, a match for `verify`. */
export type Argon2idResult<J extends Argon2idJob> = J extends { readonly kind: 'hash' } ? string : boolean;

/** Runs a job here, on libuv's thread pool (the fallback, and the child's own work). */
export async function runArgon2idJob(job: Argon2idJob): Promise<string | boolean> {
  switch (job.kind) {
    case 'hash': return hashPassword(job.password);
    case 'verify': return verifyPassword(job.hash, job.password);
  }
}
