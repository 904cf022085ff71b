/**
 * JWT signing keys (ES256), kept in the store so that every replica signs and verifies with the
 * same set. The newest active key signs; a rotated-out key keeps verifying until every token it
 * signed has expired, then it leaves the JWKS. Replicas reload the set periodically and whenever
 * a token names a key id they do not know.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { MetaStore } from '../../catalog/store/meta-store.js';

export const SIGNING_ALGORITHM = 'ES256';
const KEYGEN_LOCK_KEY = '7310581144502273';
/** A token naming an unknown kid triggers at most one reload per this many milliseconds. */
const UNKNOWN_KID_RELOAD_MS = 1000;

type KeyLike = Awaited<ReturnType<typeof importJWK>>;

interface LoadedKey {
  readonly kid: string;
  readonly publicJwk: JWK;
  readonly publicKey: KeyLike;
  readonly privateKey: KeyLike;
  readonly createdAt: number;
  readonly retiredAt: number | null;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  private active: LoadedKey | undefined;
  private lastReload = 0;

  private constructor(
    private readonly store: MetaStore,
    private readonly clock: Clock,
    /** How long a retired key must keep verifying: the longest access-token lifetime. */
    private readonly verifyGraceMs: number,
  ) {}

  /** Loads the key set, creating the first key on a fresh store. */
  static async open(store: MetaStore, clock: Clock, verifyGraceMs: number): Promise<KeyRing> {
    const ring = new KeyRing(store, clock, verifyGraceMs);
    await ring.reload();
    if (!ring.active) {
      await store.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', [KEYGEN_LOCK_KEY]);
        const exists = await tx.query('SELECT 1 FROM signing_keys WHERE retired_at IS NULL LIMIT 1');
        if (exists.rows.length === 0) await insertNewKey(tx);
      });
      await ring.reload();
    }
    if (!ring.active) throw new Error('no active signing key after key creation');
    return ring;
  }

  /** Creates a new signing key and retires the current one (floe admin rotate-signing-key). */
  static async rotate(store: MetaStore): Promise<string> {
    return store.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [KEYGEN_LOCK_KEY]);
      await tx.query('UPDATE signing_keys SET retired_at = now() WHERE retired_at IS NULL');
      return insertNewKey(tx);
    });
  }

  /** Re-reads the key set from the store (new keys from a rotation on another replica). */
  async reload(): Promise<void> {
    this.lastReload = this.clock.now();
    const rows = (await this.store.query<{ kid: string; private_jwk: JWK; public_jwk: JWK; created_at: Date; retired_at: Date | null }>(
      'SELECT kid, private_jwk, public_jwk, created_at, retired_at FROM signing_keys ORDER BY created_at',
    )).rows;
    const next = new Map<string, LoadedKey>();
    let active: LoadedKey | undefined;
    for (const row of rows) {
      const retiredAt = row.retired_at ? row.retired_at.getTime() : null;
      if (retiredAt !== null && retiredAt + this.verifyGraceMs < this.clock.now()) continue;
      const known = this.keys.get(row.kid);
      const key: LoadedKey = known && known.retiredAt === retiredAt ? known : {
        kid: row.kid,
        publicJwk: row.public_jwk,
        publicKey: await importJWK(row.public_jwk, SIGNING_ALGORITHM),
        privateKey: await importJWK(row.private_jwk, SIGNING_ALGORITHM),
        createdAt: row.created_at.getTime(),
        retiredAt,
      };
      next.set(key.kid, key);
      if (retiredAt === null && (!active || key.createdAt >= active.createdAt)) active = key;
    }
    this.keys = next;
    this.active = active;
  }

  signingKey(): { kid: string; key: KeyLike } {
    if (!this.active) throw new Error('no active signing key');
    return { kid: this.active.kid, key: this.active.privateKey };
  }

  /** The public key for `kid`, reloading once (throttled) when it is unknown. */
  async verificationKey(kid: string | undefined): Promise<KeyLike | undefined> {
    if (kid === undefined) return undefined;
    const key = this.keys.get(kid);
    if (key) return key.retiredAt !== null && key.retiredAt + this.verifyGraceMs < this.clock.now() ? undefined : key.publicKey;
    if (this.clock.now() - this.lastReload < UNKNOWN_KID_RELOAD_MS) return undefined;
    await this.reload();
    return this.keys.get(kid)?.publicKey;
  }

  /** The JSON Web Key Set of every key that may still verify a live token. */
  jwks(): { keys: JWK[] } {
    return { keys: [...this.keys.values()].map((k) => ({ ...k.publicJwk, kid: k.kid, alg: SIGNING_ALGORITHM, use: 'sig' })) };
  }
}

async function insertNewKey(tx: { query: MetaStore['query'] }): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  const kid = randomUUID();
  await tx.query('INSERT INTO signing_keys (kid, algorithm, private_jwk, public_jwk) VALUES ($1, $2, $3, $4)', [
    kid, SIGNING_ALGORITHM, JSON.stringify(await exportJWK(privateKey)), JSON.stringify(await exportJWK(publicKey)),
  ]);
  return kid;
}
