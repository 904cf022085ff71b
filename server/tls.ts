/**
 * HTTPS of the main listener. `server.tls` names a PEM certificate chain and its private key; they
 * are read at start and again when the operator asks (SIGHUP). A reload swaps the listening
 * server's secure context (`setSecureContext`): the listener and the connections already open stay,
 * and every later handshake presents the new certificate, so a renewed certificate (ACME,
 * cert-manager) goes live without a restart or a dropped request. A reload whose files cannot be
 * read, do not parse or do not belong together keeps the certificate being served.
 */
import { readFileSync } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { ConfigError, type TlsFilesConfig } from './config.js';

/** What a secure context is made of, read from the configured files. */
export interface TlsMaterial {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** SHA-256 fingerprint of the leaf certificate, for the log (never the key). */
  readonly fingerprint256: string;
}

/** The outcome of a reload: the new certificate is served, or the old one still is and why. */
export type TlsReload =
  | { readonly kind: 'reloaded'; readonly fingerprint256: string }
  | { readonly kind: 'kept'; readonly reason: string }
  | { readonly kind: 'not-configured' };

/**
 * Reads and checks the certificate and key: both parse and the key is the certificate's (so a
 * half-written renewal is refused here, not at the next client's handshake). Throws ConfigError.
 */
export function readTlsMaterial(files: TlsFilesConfig): TlsMaterial {
  const read = (path: string, what: string): Buffer => {
    try {
      return readFileSync(resolve(path));
    } catch (e) {
      throw new ConfigError(`server.tls.${what}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  };
  const cert = read(files.cert_file, 'cert_file');
  const key = read(files.key_file, 'key_file');
  let fingerprint256: string;
  try {
    fingerprint256 = new X509Certificate(cert).fingerprint256;
  } catch (e) {
    throw new ConfigError(`server.tls.cert_file: ${files.cert_file} holds no PEM certificate (${(e as Error).message})`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (e) {
    // OpenSSL's message says what is wrong (bad key, key values mismatch) and never holds the key.
    throw new ConfigError(`server.tls: the key in ${files.key_file} does not fit the certificate in ${files.cert_file} (${(e as Error).message})`);
  }
  return { cert, key, fingerprint256 };
}

/**
 * Rereads the configured files into the running HTTPS server. `server` is the listener's Node
 * server (Fastify's `app.server`); without `server.tls` there is nothing to do.
 */
export function reloadTls(server: HttpsServer, files: TlsFilesConfig | null): TlsReload {
  if (files === null) return { kind: 'not-configured' };
  let material: TlsMaterial;
  try {
    material = readTlsMaterial(files);
  } catch (e) {
    if (e instanceof ConfigError) return { kind: 'kept', reason: e.message };
    throw e;
  }
  server.setSecureContext({ cert: material.cert, key: material.key });
  return { kind: 'reloaded', fingerprint256: material.fingerprint256 };
}
