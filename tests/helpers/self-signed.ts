/**
 * A throwaway self-signed TLS certificate for loopback test servers (made with the openssl CLI, as
 * tests/https-listener.test.ts does), and the Azure SDK client options that trust it. Trust is given
 * per client (or per child process through NODE_EXTRA_CA_CERTS), never by turning verification off.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SelfSignedCertificate {
  readonly certFile: string;
  readonly keyFile: string;
  /** The certificate (PEM): the CA a client trusts. */
  readonly cert: string;
  readonly key: string;
}

/** A fresh P-256 certificate for 127.0.0.1 and localhost, valid a day, in `<dir>/<name>.{cert,key}.pem`. */
export function makeSelfSignedCertificate(dir: string, name: string): SelfSignedCertificate {
  const certFile = join(dir, `${name}.cert.pem`);
  const keyFile = join(dir, `${name}.key.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-keyout', keyFile, '-out', certFile, '-subj', `/CN=floe-${name}`, '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

/**
 * Client options that make an Azure SDK client trust `ca`: core-rest-pipeline's `tlsOptions`. The
 * identity clients declare it; the storage clients hand their options on to core-rest-pipeline
 * (which adds its TLS policy) without declaring it, hence the wider type. A client that did not
 * pass it on would fail the handshake, not skip the check.
 */
export function trusting(ca: string): { readonly tlsOptions: { readonly ca: string } } {
  return { tlsOptions: { ca } };
}
