/**
 * TOTP (RFC 6238) through otplib: SHA-1, 6 digits, 30-second steps, one step of drift either way.
 * A code is accepted once: the caller records the matched time step and refuses it again.
 */
import { generateSecret, generateSync, generateURI, verifySync } from 'otplib';

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;

/** A new base32 secret of 20 random bytes (160 bits, RFC 4226's recommendation). */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

export function totpUri(secret: string, issuer: string, account: string): string {
  return generateURI({ issuer, label: account, secret, digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS });
}

export type TotpAlgorithm = 'sha1' | 'sha256' | 'sha512';

export interface TotpOptions {
  readonly digits?: number;
  readonly algorithm?: TotpAlgorithm;
}

/** The code at `nowSeconds` (tests and the RFC vectors). */
export function totpCode(secret: string, nowSeconds: number, options: TotpOptions = {}): string {
  return generateSync({ secret, epoch: nowSeconds, digits: options.digits ?? TOTP_DIGITS, algorithm: options.algorithm ?? 'sha1', period: TOTP_PERIOD_SECONDS });
}

/** The time step `code` is valid for at `nowSeconds` (±1 step), or undefined. */
export function matchTotp(secret: string, code: string, nowSeconds: number, options: TotpOptions = {}): number | undefined {
  const digits = options.digits ?? TOTP_DIGITS;
  if (!new RegExp(`^[0-9]{${digits}}$`).test(code)) return undefined;
  try {
    const r = verifySync({ secret, token: code, epoch: nowSeconds, digits, algorithm: options.algorithm ?? 'sha1', period: TOTP_PERIOD_SECONDS, epochTolerance: TOTP_PERIOD_SECONDS });
    return r.valid ? Math.floor(nowSeconds / TOTP_PERIOD_SECONDS) + r.delta : undefined;
  } catch {
    return undefined;
  }
}
