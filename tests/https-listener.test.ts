/**
 * The main listener speaks HTTPS when `server.tls` names a certificate and key: OAuth and SQL over
 * real TLS with a self-signed certificate made here with the openssl CLI; no plain HTTP on that
 * port; a reload (the function SIGHUP calls, and SIGHUP itself to a spawned `floe serve`) makes new
 * handshakes present the new certificate while the listener and open connections stay; files that
 * cannot be used are refused at start and kept out at reload.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest, type Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { openStore } from '../catalog/store/open-store.js';
import { ConfigError, loadConfig } from '../server/config.js';
import { readTlsMaterial, reloadTls } from '../server/tls.js';
import { exportsOf, startCli } from './helpers/cli.js';
import { startTestServer } from './helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'floe-https-'));

/** A fresh self-signed P-256 certificate for 127.0.0.1 in `<name>.cert.pem` / `<name>.key.pem`. */
function makeCertificate(name: string): { certFile: string; keyFile: string; cert: string; fingerprint256: string } {
  const certFile = join(dir, `${name}.cert.pem`);
  const keyFile = join(dir, `${name}.key.pem`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-keyout', keyFile, '-out', certFile, '-subj', `/CN=floe-${name}`, '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  const cert = readFileSync(certFile, 'utf8');
  return { certFile, keyFile, cert, fingerprint256: new X509Certificate(cert).fingerprint256 };
}

/** The certificate a fresh TLS handshake with 127.0.0.1:port is shown. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.once('error', reject);
  });
}

interface Answer { readonly status: number; readonly body: string }

function httpsCall(port: number, ca: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: init.headers ?? {}, ca, ...(init.agent ? { agent: init.agent } : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
    req.end(init.body);
  });
}

async function tokenOver(port: number, ca: string, clientId: string, clientSecret: string): Promise<string> {
  const r = await httpsCall(port, ca, '/v1/oauth/tokens', {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
  });
  if (r.status !== 200) throw new Error(`token: ${r.status} ${r.body}`);
  return (JSON.parse(r.body) as { access_token: string }).access_token;
}

const first = makeCertificate('first');
const second = makeCertificate('second');
const third = makeCertificate('third');
/** The files the server is configured with; the test overwrites them as a renewal would. */
const live = { cert_file: join(dir, 'live.cert.pem'), key_file: join(dir, 'live.key.pem') };
const install = (c: { certFile: string; keyFile: string }): void => {
  copyFileSync(c.certFile, live.cert_file);
  copyFileSync(c.keyFile, live.key_file);
};

t.test('configuration: both files or none; unusable files stop the start with a message naming them', async (t) => {
  t.equal(loadConfig({ env: {} }).server.tls, null, 'plain HTTP by default');
  t.same(loadConfig({ env: { FLOE_TLS_CERT_FILE: 'c.pem', FLOE_TLS_KEY_FILE: 'k.pem' } }).server.tls, { cert_file: 'c.pem', key_file: 'k.pem' });
  t.same(loadConfig({ env: { FLOE__SERVER__TLS__CERT_FILE: 'c.pem', FLOE__SERVER__TLS__KEY_FILE: 'k.pem' } }).server.tls, { cert_file: 'c.pem', key_file: 'k.pem' });
  t.throws(() => loadConfig({ env: { FLOE_TLS_CERT_FILE: 'c.pem' } }), { name: 'ConfigError', message: /server\.tls: must have required property 'key_file'/ });
  t.throws(() => readTlsMaterial({ cert_file: join(dir, 'absent.pem'), key_file: first.keyFile }), { name: 'ConfigError', message: /server\.tls\.cert_file: cannot read .*absent\.pem: ENOENT/ });
  t.throws(() => readTlsMaterial({ cert_file: first.keyFile, key_file: first.keyFile }), { name: 'ConfigError', message: /holds no PEM certificate/ });
  const mismatch = (() => { try { readTlsMaterial({ cert_file: first.certFile, key_file: second.keyFile }); return undefined; } catch (e) { return e; } })();
  t.ok(mismatch instanceof ConfigError, 'a key of another certificate is refused');
  t.match((mismatch as Error).message, /does not fit the certificate/);
  t.notMatch((mismatch as Error).message, /PRIVATE KEY/, 'the message never holds key material');
});

t.test('over real HTTPS: tokens and SQL; plain HTTP is not served on that port; reload swaps the certificate', async (t) => {
  install(first);
  const store = await openStore({ kind: 'pglite-memory' });
  const server = await startTestServer(store, { config: (c) => ({ ...c, server: { ...c.server, tls: live } }) });
  t.teardown(() => server.close());
  const address = await server.app.listen({ host: '127.0.0.1', port: 0 });
  t.match(address, /^https:\/\/127\.0\.0\.1:\d+$/, 'Fastify listens with TLS');
  const port = Number(new URL(address).port);

  t.equal(await servedFingerprint(port), first.fingerprint256, 'the configured certificate is served');
  const token = await tokenOver(port, first.cert, server.clientId, server.clientSecret);
  const q = await httpsCall(port, first.cert, '/api/query', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'SELECT 40 + 2 AS answer' }) });
  t.equal(q.status, 200, q.body);
  t.same((JSON.parse(q.body) as { rows: unknown[][] }).rows, [[42]]);

  await t.rejects(httpsCall(port, second.cert, '/v1/config'), 'a client trusting only another certificate refuses the handshake');
  const plain = await new Promise<string>((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/config' }, (res) => resolve(`answered ${res.statusCode}`));
    req.once('error', (e) => resolve(`refused: ${e.message}`));
    req.end();
  });
  t.notMatch(plain, /answered 2\d\d/, `plain HTTP gets no catalog answer (${plain})`);

  // A keep-alive connection opened under the first certificate.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  t.equal((await httpsCall(port, first.cert, '/v1/config', { agent })).status, 200);

  install(second);
  const outcome = reloadTls(server.app.server as unknown as HttpsServer, live);
  t.same(outcome, { kind: 'reloaded', fingerprint256: second.fingerprint256 });
  t.equal(await servedFingerprint(port), second.fingerprint256, 'new handshakes get the new certificate');
  t.equal((await httpsCall(port, second.cert, '/v1/config')).status, 200, 'a client trusting the new certificate connects');
  t.equal((await httpsCall(port, first.cert, '/v1/config', { agent })).status, 200, 'the connection opened before the reload still serves');

  // A renewal caught half-written: the new certificate with the old key. Kept out; the second stays.
  copyFileSync(third.certFile, live.cert_file);
  const kept = reloadTls(server.app.server as unknown as HttpsServer, live);
  t.equal(kept.kind, 'kept');
  t.match(kept, { reason: /does not fit the certificate/ });
  t.equal(await servedFingerprint(port), second.fingerprint256, 'the served certificate is unchanged');
  writeFileSync(live.cert_file, 'not a certificate');
  t.equal(reloadTls(server.app.server as unknown as HttpsServer, live).kind, 'kept');
  t.equal(await servedFingerprint(port), second.fingerprint256);
  t.same(reloadTls(server.app.server as unknown as HttpsServer, null), { kind: 'not-configured' });
});

t.test('floe serve: https in the banner, SIGHUP reloads the certificate, the process keeps serving', async (t) => {
  install(first);
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-https-serve-'));
  const server = await startCli(['--port', '0', '--data-dir', dataDir], { FLOE_TLS_CERT_FILE: live.cert_file, FLOE_TLS_KEY_FILE: live.key_file, FLOE_LOG_LEVEL: 'info' });
  t.teardown(() => server.stop());
  t.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const port = Number(new URL(server.url).port);
  let out = '';
  server.process.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  t.equal(await servedFingerprint(port), first.fingerprint256);

  install(third);
  server.process.kill('SIGHUP');
  // Bounded only against a server that never reloads: a loaded machine may take seconds.
  for (const until = Date.now() + 60_000; !out.includes('TLS certificate reloaded') && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
  t.match(out, /TLS certificate reloaded/, 'the reload is logged');
  t.match(out, third.fingerprint256, 'with the new fingerprint');
  t.equal(await servedFingerprint(port), third.fingerprint256, 'the new certificate is served after SIGHUP');
  t.equal(server.process.exitCode, null, 'SIGHUP did not end the process');
  const creds = exportsOf(server.banner);
  await tokenOver(port, third.cert, creds.FLOE_CLIENT_ID!, creds.FLOE_CLIENT_SECRET!);
  t.equal(await server.stop(), 0, 'stops cleanly');
});

t.test('floe serve refuses to start with a key that does not fit the certificate', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-https-bad-'));
  await t.rejects(startCli(['--port', '0', '--data-dir', dataDir], { FLOE_TLS_CERT_FILE: first.certFile, FLOE_TLS_KEY_FILE: second.keyFile }), /exited with 2[\s\S]*does not fit the certificate/);
});
