/**
 * Encryption of stored secrets that must be read back (TOTP seeds, webhook signing secrets) under
 * the server key: AES-256-GCM with a random 96-bit nonce, the row's purpose bound as associated
 * data. The key comes from the operator's configuration (`principals.encryption_key`, base64 of
 * 32 bytes); without one, a key is generated once and kept in the store (documented as weaker).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { MetaStore } from '../../catalog/store/meta-store.js';

const FORMAT = 'v1';

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromKey(key: Uint8Array): SecretBox {
    if (key.length !== 32) throw new Error('the server key must be 32 bytes');
    return new SecretBox(Buffer.from(key));
  }

  /** `purpose` (e.g. "totp:<principal id>") binds the ciphertext to its row. */
  seal(plaintext: string, purpose: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${FORMAT}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /**
   * A 32-byte key for another purpose (the HMAC of stage upload URLs), derived with HKDF-SHA256:
   * the same on every replica that holds the server key, never equal to the sealing key.
   */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `floe:${purpose}`, 32));
  }

  open(sealed: string, purpose: string): string {
    if (!sealed.startsWith(`${FORMAT}:`)) throw new Error('unknown sealed-secret format');
    const raw = Buffer.from(sealed.slice(FORMAT.length + 1), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/** The configured key, or the store's generated one (created once, race-free across replicas). */
export async function openSecretBox(store: MetaStore, configuredKey: string | null): Promise<SecretBox> {
  if (configuredKey) {
    const key = Buffer.from(configuredKey, 'base64');
    if (key.length !== 32) throw new Error('principals.encryption_key must be base64 of 32 bytes');
    return SecretBox.fromKey(key);
  }
  await store.query('INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', ['principals.encryption_key', randomBytes(32)]);
  const row = (await store.query<{ value: Uint8Array }>('SELECT value FROM server_secrets WHERE name = $1', ['principals.encryption_key'])).rows[0];
  if (!row) throw new Error('server key missing after creation');
  return SecretBox.fromKey(row.value);
}
