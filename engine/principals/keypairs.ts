/**
 * Service-account public keys: PEM validation per algorithm (RSA of at least 2048 bits for
 * RS256/RS512, P-256 for ES256, P-384 for ES384). Private keys are refused outright: pasting one
 * into SQL would put it in history.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import type { KeyAlgorithm } from '../../grammar/ir.js';

export const MIN_RSA_BITS = 2048;
const CURVE_OF: ReadonlyMap<KeyAlgorithm, string> = new Map([['ES256', 'prime256v1'], ['ES384', 'secp384r1']]);

export type KeyValidation =
  | { readonly ok: true; readonly algorithm: KeyAlgorithm; readonly fingerprint: string; readonly pem: string }
  | { readonly ok: false; readonly reason: string };

/** Checks `pem` against `algorithm` (or infers it: RSA → RS256, P-256 → ES256, P-384 → ES384). */
export function validatePublicKey(pem: string, algorithm: KeyAlgorithm | undefined): KeyValidation {
  if (/PRIVATE KEY/.test(pem)) return { ok: false, reason: 'a private key was given; register the public key only' };
  if (!/-----BEGIN (RSA )?PUBLIC KEY-----/.test(pem)) return { ok: false, reason: 'PUBLIC_KEY must be a PEM public key (-----BEGIN PUBLIC KEY-----)' };
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    return { ok: false, reason: 'PUBLIC_KEY is not a readable PEM public key' };
  }
  const details = key.asymmetricKeyDetails ?? {};
  let alg: KeyAlgorithm;
  if (key.asymmetricKeyType === 'rsa') {
    alg = algorithm ?? 'RS256';
    if (alg !== 'RS256' && alg !== 'RS512') return { ok: false, reason: `an RSA key cannot be used with ${alg}` };
    if ((details.modulusLength ?? 0) < MIN_RSA_BITS) return { ok: false, reason: `RSA keys must have at least ${MIN_RSA_BITS} bits (this one has ${details.modulusLength ?? 0})` };
  } else if (key.asymmetricKeyType === 'ec') {
    const inferred: KeyAlgorithm | undefined = details.namedCurve === 'prime256v1' ? 'ES256' : details.namedCurve === 'secp384r1' ? 'ES384' : undefined;
    alg = algorithm ?? inferred ?? 'ES256';
    const wanted = CURVE_OF.get(alg);
    if (!wanted) return { ok: false, reason: `an EC key cannot be used with ${alg}` };
    if (details.namedCurve !== wanted) return { ok: false, reason: `${alg} needs a ${alg === 'ES256' ? 'P-256' : 'P-384'} key (this one is ${details.namedCurve ?? 'unknown'})` };
  } else {
    return { ok: false, reason: `key type ${key.asymmetricKeyType ?? 'unknown'} is not supported (RSA or EC P-256/P-384)` };
  }
  const der = key.export({ format: 'der', type: 'spki' });
  const fingerprint = `SHA256:${createHash('sha256').update(der).digest('base64')}`;
  return { ok: true, algorithm: alg, fingerprint, pem: key.export({ format: 'pem', type: 'spki' }).toString() };
}
