/**
 * `floe sql`: the users' SQL client (docs/loading.md, "floe sql"). It talks HTTP only: a token from
 * a client id and secret (client_credentials), a PAT or access token, or a saved profile in
 * `~/.floe/config`; statements go to `POST /api/query` with the session (USE) carried between
 * them; `PUT file://… @stage[/path]` and `GET @stage/path file://dir` move files through the
 * `/v1/stages` endpoints (multipart above a threshold, parts in parallel).
 *
 * `-c 'SQL'` and `-f file.sql` (or SQL on a non-terminal stdin) run non-interactively and exit 1
 * at the first statement that fails (2 for usage and connection errors); on a terminal it prompts,
 * reads multi-line statements up to `;`, keeps a history, and Ctrl-C cancels the running statement.
 */
import { createReadStream, createWriteStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { splitStatements as splitSql } from '../catalog/store/migrate.js';

export type OutputFormat = 'table' | 'csv' | 'json';

/** A statement's failure as the server reported it. */
class StatementError extends Error {}
/** Bad arguments, no credentials, an unreachable server. */
export class ShellUsageError extends Error {}

interface Answer {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  readonly queryId?: string;
  readonly elapsedMs?: number;
}

const SQL_USAGE = `usage: floe sql [--url URL] [--profile NAME | --client-id ID --client-secret S | --token T]
         [--catalog C] [--schema S] [--format table|csv|json] [-c SQL]... [-f FILE] [FILE]
  PUT file://path/*.csv @stage[/path]   uploads (multipart above --multipart-threshold bytes, in
                                        --part-size parts, --parallel at a time; progress on a terminal)
  GET @stage[/path] file://dir          downloads`;

/**
 * Statements of a script: SQL split at top-level semicolons, except that PUT and GET (which hold
 * local paths such as `file:///data/*.csv`, where `/*` is no comment) end at `;` or the line's end.
 */
export function splitStatements(text: string): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.trim() !== '') {
    const lead = /^(\s*(?:--[^\n]*\n\s*)*)/.exec(rest)![1]!.length;
    const body = rest.slice(lead);
    if (/^(put|get)\s/i.test(body)) {
      const end = body.search(/;|\n/);
      const statement = end < 0 ? body : body.slice(0, end);
      if (statement.trim() !== '') out.push(statement.trim());
      rest = end < 0 ? '' : body.slice(end + 1);
      continue;
    }
    // Up to the next line that starts a PUT or GET, split as SQL.
    const next = body.search(/(^|\n)\s*(put|get)\s/i);
    const chunk = next <= 0 ? body : body.slice(0, next);
    out.push(...splitSql(chunk));
    rest = next <= 0 ? '' : body.slice(next);
  }
  return out;
}

/** Reads `[name]` sections of `key = value` lines. */
export function readProfiles(text: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = new Map();
      out.set(section[1]!.trim(), current);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq > 0 && current) current.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return out;
}

class FloeClient {
  private token: string | undefined;
  session: { catalog?: string; schema?: string; session?: Record<string, string> } = {};

  constructor(readonly url: string, private readonly auth: { clientId?: string; clientSecret?: string; token?: string }) {
    this.token = auth.token;
  }

  private async bearer(): Promise<string> {
    if (this.token !== undefined) return this.token;
    if (this.auth.clientId === undefined || this.auth.clientSecret === undefined) throw new ShellUsageError('no credentials: give --token, --client-id and --client-secret, or a profile');
    const r = await fetch(`${this.url}/v1/oauth/tokens`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: this.auth.clientId, client_secret: this.auth.clientSecret }).toString(),
    }).catch((e: unknown) => { throw new ShellUsageError(`cannot reach ${this.url}: ${(e as Error).message}`); });
    const body = await r.json().catch(() => ({})) as { access_token?: string; error_description?: string };
    if (r.status !== 200 || body.access_token === undefined) throw new ShellUsageError(`sign-in failed: ${body.error_description ?? r.status}`);
    this.token = body.access_token;
    return this.token;
  }

  async post(path: string, body: unknown, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const r = await fetch(`${this.url}${path}`, {
      method: 'POST', headers: { authorization: `Bearer ${await this.bearer()}`, 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal ? { signal } : {}),
    }).catch((e: unknown) => {
      if ((e as Error).name === 'AbortError') throw new StatementError('cancelled');
      throw new ShellUsageError(`cannot reach ${this.url}: ${(e as Error).message}`);
    });
    const json = await r.json().catch(() => ({})) as Record<string, unknown>;
    if (r.status >= 400) {
      const err = json['error'];
      const message = typeof err === 'object' && err !== null ? String((err as Record<string, unknown>)['message']) : String(json['message'] ?? `HTTP ${r.status}`);
      throw new StatementError(json['sql_state'] ? `${message} (SQLSTATE ${String(json['sql_state'])})` : message);
    }
    return json;
  }

  async query(sql: string, signal?: AbortSignal): Promise<Answer> {
    const j = await this.post('/api/query', { sql, ...this.session }, signal);
    const s = j['session'] as { catalog: string; schema: string; settings: Record<string, string> } | undefined;
    if (s) this.session = { catalog: s.catalog, schema: s.schema, session: s.settings };
    return { columns: j['columns'] as string[], rows: j['rows'] as unknown[][], queryId: j['query_id'] as string, elapsedMs: j['elapsed_ms'] as number };
  }
}

/** `PUT file://… @stage[/path]` or `GET @stage[/path] file://…` (files are the shell's, not the server's). */
export function parseFileCommand(sql: string): { kind: 'put'; local: string; stage: string; path: string } | { kind: 'get'; stage: string; path: string; local: string } | undefined {
  const text = sql.trim().replace(/;$/, '').trim();
  const put = /^put\s+'?file:\/\/([^'\s]+)'?\s+@([^\s/]+)(?:\/(\S*))?$/i.exec(text);
  if (put) return { kind: 'put', local: put[1]!, stage: put[2]!, path: put[3] ?? '' };
  const get = /^get\s+@([^\s/]+)(?:\/(\S*))?\s+'?file:\/\/([^'\s]+)'?$/i.exec(text);
  if (get) return { kind: 'get', stage: get[1]!, path: get[2] ?? '', local: get[3]! };
  return undefined;
}

/** Files matching a path whose last part may hold `*` and `?`. */
export function expandLocal(pattern: string): string[] {
  const dir = dirname(resolve(pattern));
  const name = basename(pattern);
  if (!/[*?]/.test(name)) return existsSync(pattern) ? [resolve(pattern)] : [];
  const re = new RegExp(`^${name.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return existsSync(dir) ? readdirSync(dir).filter((f) => re.test(f) && statSync(join(dir, f)).isFile()).sort().map((f) => join(dir, f)) : [];
}

/**
 * PUTs `length` bytes of `file` from `start` to a presigned URL, streamed from disk with an explicit
 * Content-Length (an object store's presigned URL signs it, and the URL then takes exactly that
 * many bytes), with the `headers` the presign answer said to send. `onBytes` hears of each chunk
 * sent, for the progress bar.
 */
function putRange(url: string, file: string, start: number, length: number, onBytes: (n: number) => void, headers: Readonly<Record<string, string>> = {}): Promise<{ status: number; etag: string; body: string }> {
  return new Promise((resolvePut, reject) => {
    const u = new URL(url);
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(u, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', ...headers, 'content-length': String(length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolvePut({ status: res.statusCode ?? 0, etag: String(res.headers.etag ?? ''), body: Buffer.concat(chunks).toString('utf8').slice(0, 500) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (length === 0) {
      req.end();
      return;
    }
    const input = createReadStream(file, { start, end: start + length - 1 });
    input.on('data', (c) => onBytes(c.length));
    input.on('error', (e) => req.destroy(e));
    input.pipe(req);
  });
}

/** A PUT the store took: S3, GCS and Floe answer 200, Azure 201. */
function stored(status: number): boolean {
  return status === 200 || status === 201;
}

/** The headers a presign answer tells the client to send. */
function headersOf(answer: Record<string, unknown>): Record<string, string> {
  const h = answer['headers'];
  if (typeof h !== 'object' || h === null) return {};
  return Object.fromEntries(Object.entries(h).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** Why a presigned PUT failed, in one line (the store's XML error code when it gave one). */
function putFailure(what: string, r: { status: number; body: string }): StatementError {
  const code = /<Code>([^<]+)<\/Code>/.exec(r.body)?.[1] ?? /"message"\s*:\s*"([^"]+)"/.exec(r.body)?.[1];
  return new StatementError(`upload of ${what} failed: HTTP ${r.status}${code ? ` (${code})` : ''}`);
}

/**
 * A one-line progress bar on stderr, redrawn at most every 100 ms; nothing at all when stderr is
 * not a terminal (scripts and logs get the result rows only).
 */
export class Progress {
  private sent = 0;
  private drawn = 0;
  private readonly started = Date.now();

  constructor(private readonly label: string, private readonly total: number, private readonly out: NodeJS.WriteStream | undefined) {}

  static for(label: string, total: number): Progress {
    return new Progress(label, total, process.stderr.isTTY ? process.stderr : undefined);
  }

  add(n: number): void {
    this.sent += n;
    const now = Date.now();
    if (now - this.drawn >= 100) {
      this.drawn = now;
      this.draw();
    }
  }

  private draw(): void {
    if (this.out === undefined) return;
    const fraction = this.total === 0 ? 1 : Math.min(1, this.sent / this.total);
    const width = 24;
    const filled = Math.round(fraction * width);
    const mib = (b: number) => (b / (1024 * 1024)).toFixed(1);
    const seconds = Math.max(0.001, (Date.now() - this.started) / 1000);
    this.out.write(`\r${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${mib(this.sent)}/${mib(this.total)} MiB ${mib(this.sent / seconds)} MiB/s\u001b[K`);
  }

  /** Draws the final state and ends the line. */
  done(): void {
    if (this.out === undefined) return;
    this.draw();
    this.out.write('\n');
  }
}

async function putFile(client: FloeClient, file: string, stage: string, prefix: string, threshold: number, partBytes: number, parallel: number): Promise<unknown[]> {
  const size = statSync(file).size;
  const path = prefix === '' ? basename(file) : prefix.endsWith('/') ? `${prefix}${basename(file)}` : `${prefix}/${basename(file)}`;
  const catalog = client.session.catalog;
  const where = { ...(catalog ? { catalog } : {}), stage, path };
  const progress = Progress.for(basename(file), size);
  if (size <= threshold) {
    const p = await client.post('/v1/stages/presign', { ...where, size });
    const r = await putRange(String(p['url']), file, 0, size, (n) => progress.add(n), headersOf(p));
    progress.done();
    if (!stored(r.status)) throw putFailure(file, r);
    return [basename(file), `@${stage}/${path}`, size, 'UPLOADED'];
  }
  // The server cuts the file as declared (each part URL takes exactly its part's bytes).
  const init = await client.post('/v1/stages/presign/multipart/init', { ...where, size, part_size: partBytes });
  const uploadId = String(init['upload_id']);
  if (init['protocol'] === 'resumable') return putResumable(client, init, file, size, where, progress, [basename(file), `@${stage}/${path}`, size]);
  const urls = init['part_urls'] as { part_number: number; url: string; size: number }[];
  const parts = urls.length;
  const partSize = Number(init['part_size'] ?? partBytes);
  const etags: string[] = new Array<string>(parts);
  try {
    let next = 0;
    let failed = false;
    const worker = async () => {
      for (let i = next++; i < parts && !failed; i = next++) {
        const start = i * partSize;
        const r = await putRange(urls[i]!.url, file, start, urls[i]!.size ?? Math.min(partSize, size - start), (n) => progress.add(n));
        if (!stored(r.status)) {
          failed = true;
          throw putFailure(`part ${i + 1} of ${file}`, r);
        }
        etags[i] = r.etag;
      }
    };
    // Every part in flight settles before an abort, so none lands after it.
    const settled = await Promise.allSettled(Array.from({ length: Math.min(parallel, parts) }, worker));
    const rejected = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (rejected !== undefined) throw rejected.reason;
    // Azure's Put Block answers no ETag: such a part is listed by its number alone.
    await client.post('/v1/stages/presign/multipart/complete', { ...where, upload_id: uploadId, parts: etags.map((etag, i) => ({ part_number: i + 1, ...(etag !== '' ? { etag } : {}) })) });
    progress.done();
  } catch (e) {
    progress.done();
    await client.post('/v1/stages/presign/multipart/abort', { ...where, upload_id: uploadId }).catch(() => undefined);
    throw e;
  }
  return [basename(file), `@${stage}/${path}`, size, `UPLOADED (${parts} parts)`];
}

/**
 * A resumable upload (GCS): the file's chunks in order to the session URL, each with its
 * `Content-Range` (the store answers 308 until the last, which finalizes the object), then
 * completion, which asks the store whether it has every byte.
 */
async function putResumable(client: FloeClient, init: Record<string, unknown>, file: string, size: number, where: Record<string, string>, progress: Progress, row: unknown[]): Promise<unknown[]> {
  const uploadId = String(init['upload_id']);
  const session = String(init['session_url']);
  const chunk = Number(init['part_size']);
  let chunks = 0;
  try {
    for (let start = 0; start < size; start += chunk) {
      const length = Math.min(chunk, size - start);
      const last = start + length === size;
      const r = await putRange(session, file, start, length, (n) => progress.add(n), { 'content-range': `bytes ${start}-${start + length - 1}/${size}` });
      chunks++;
      if (last ? !stored(r.status) : r.status !== 308) throw putFailure(`bytes ${start}-${start + length - 1} of ${file}`, r);
    }
    await client.post('/v1/stages/presign/multipart/complete', { ...where, upload_id: uploadId });
    progress.done();
  } catch (e) {
    progress.done();
    await client.post('/v1/stages/presign/multipart/abort', { ...where, upload_id: uploadId }).catch(() => undefined);
    throw e;
  }
  return [...row, `UPLOADED (${chunks} parts)`];
}

async function runFileCommand(client: FloeClient, cmd: NonNullable<ReturnType<typeof parseFileCommand>>, threshold: number, partBytes: number, parallel: number): Promise<Answer> {
  if (cmd.kind === 'put') {
    const files = expandLocal(cmd.local);
    if (files.length === 0) throw new StatementError(`no file matches ${cmd.local}`);
    const rows: unknown[][] = [];
    for (const f of files) rows.push(await putFile(client, f, cmd.stage, cmd.path, threshold, partBytes, parallel));
    return { columns: ['source', 'target', 'size', 'status'], rows };
  }
  const listed = await client.query(`LIST @${cmd.stage}${cmd.path === '' ? '' : `/${cmd.path}`}`);
  const rows: unknown[][] = [];
  for (const row of listed.rows) {
    const key = String(row[0]).slice(cmd.stage.length + 1);
    const p = await client.post('/v1/stages/presign', { ...(client.session.catalog ? { catalog: client.session.catalog } : {}), stage: cmd.stage, path: key, method: 'GET' });
    const target = join(resolve(cmd.local), basename(key));
    await mkdir(dirname(target), { recursive: true });
    const r = await fetch(String(p['url']));
    if (r.status !== 200 || r.body === null) throw new StatementError(`download of ${key} failed: HTTP ${r.status}`);
    await pipeline(Readable.fromWeb(r.body as never), createWriteStream(target));
    rows.push([`@${cmd.stage}/${key}`, target, Number(row[1]), 'DOWNLOADED']);
  }
  return { columns: ['source', 'target', 'size', 'status'], rows };
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** The answer in the chosen format (text ending in a newline). */
export function formatAnswer(a: Answer, format: OutputFormat): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(a.rows.map((r) => Object.fromEntries(a.columns.map((c, i) => [c, r[i] ?? null]))))}\n`;
    case 'csv': {
      const q = (v: unknown) => {
        if (v === null || v === undefined) return '';
        const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
        return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
      };
      return [a.columns.map(q).join(','), ...a.rows.map((r) => r.map(q).join(','))].join('\n') + '\n';
    }
    case 'table': {
      if (a.columns.length === 0) return '';
      const cells = a.rows.map((r) => r.map(cell));
      const widths = a.columns.map((c, i) => Math.max(c.length, ...cells.map((r) => (r[i] ?? '').length)));
      const line = (vals: readonly string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join(' | ').trimEnd();
      return [line(a.columns), widths.map((w) => '-'.repeat(w)).join('-+-'), ...cells.map(line)].join('\n') + '\n';
    }
    default: {
      const never: never = format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
}

export async function sqlShell(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv, allowPositionals: true,
    options: {
      url: { type: 'string' }, profile: { type: 'string' }, 'client-id': { type: 'string' }, 'client-secret': { type: 'string' }, token: { type: 'string' },
      catalog: { type: 'string' }, schema: { type: 'string' }, format: { type: 'string' }, c: { type: 'string', short: 'c', multiple: true }, f: { type: 'string', short: 'f' },
      'multipart-threshold': { type: 'string' }, 'part-size': { type: 'string' }, parallel: { type: 'string' }, help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(SQL_USAGE);
    return 0;
  }
  const configPath = process.env['FLOE_CONFIG'] ?? join(homedir(), '.floe', 'config');
  const profileName = values.profile ?? process.env['FLOE_PROFILE'] ?? 'default';
  const profile = existsSync(configPath) ? readProfiles(readFileSync(configPath, 'utf8')).get(profileName) : undefined;
  if (values.profile !== undefined && profile === undefined) throw new ShellUsageError(`no profile ${values.profile} in ${configPath}`);
  const pick = (flag: string | undefined, env: string, key: string) => flag ?? process.env[env] ?? profile?.get(key);
  const url = (pick(values.url, 'FLOE_URL', 'url') ?? 'http://127.0.0.1:8181').replace(/\/+$/, '');
  const token = pick(values.token, 'FLOE_TOKEN', 'token');
  const clientId = pick(values['client-id'], 'FLOE_CLIENT_ID', 'client_id');
  const clientSecret = pick(values['client-secret'], 'FLOE_CLIENT_SECRET', 'client_secret');
  const format = (values.format ?? 'table') as OutputFormat;
  if (!['table', 'csv', 'json'].includes(format)) throw new ShellUsageError('--format is table, csv or json');
  const threshold = Number(values['multipart-threshold'] ?? 64 * 1024 * 1024);
  const partBytes = Number(values['part-size'] ?? 16 * 1024 * 1024);
  const parallel = Number(values.parallel ?? 4);
  if (!(threshold >= 0) || !(partBytes >= 1)) throw new ShellUsageError('--multipart-threshold and --part-size are byte counts');
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 64) throw new ShellUsageError('--parallel is a number of parts in flight, 1 to 64');
  const client = new FloeClient(url, { ...(token ? { token } : {}), ...(clientId ? { clientId } : {}), ...(clientSecret ? { clientSecret } : {}) });
  client.session = { ...(values.catalog ? { catalog: values.catalog } : {}), ...(values.schema ? { schema: values.schema } : {}) };

  const runOne = async (sql: string, signal?: AbortSignal): Promise<void> => {
    const cmd = parseFileCommand(sql);
    const answer = cmd !== undefined ? await runFileCommand(client, cmd, threshold, partBytes, parallel) : await client.query(sql, signal);
    process.stdout.write(formatAnswer(answer, format));
    if (format === 'table' && process.stderr.isTTY) process.stderr.write(`(${answer.rows.length} row${answer.rows.length === 1 ? '' : 's'}${answer.elapsedMs !== undefined ? `, ${answer.elapsedMs} ms` : ''}${answer.queryId ? `, query ${answer.queryId}` : ''})\n`);
  };
  const runScript = async (text: string): Promise<number> => {
    for (const statement of splitStatements(text)) {
      try {
        await runOne(statement);
      } catch (e) {
        if (e instanceof StatementError) {
          process.stderr.write(`floe: ${e.message}\n`);
          return 1;
        }
        throw e;
      }
    }
    return 0;
  };

  const scripts = [...(values.c ?? [])];
  const file = values.f ?? positionals[0];
  if (file !== undefined) scripts.push(readFileSync(file, 'utf8'));
  if (scripts.length > 0) {
    for (const s of scripts) {
      const code = await runScript(s);
      if (code !== 0) return code;
    }
    return 0;
  }
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return runScript(Buffer.concat(chunks).toString('utf8'));
  }
  return interactive(runOne);
}

/** The prompt loop: statements end at `;`, Ctrl-C cancels a running one (or clears the input). */
async function interactive(runOne: (sql: string, signal?: AbortSignal) => Promise<void>): Promise<number> {
  const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'floe> ', historySize: 1000 });
  let buffer = '';
  let running: AbortController | undefined;
  rl.on('SIGINT', () => {
    if (running) {
      running.abort();
      return;
    }
    buffer = '';
    lines = 0;
    process.stdout.write('^C\n');
    rl.setPrompt('floe> ');
    rl.prompt();
  });
  rl.prompt();
  let lines = 0;
  // readline keeps lines; the history should recall whole statements (newest first).
  const history = (rl as unknown as { history?: string[] }).history;
  for await (const line of rl) {
    buffer += (buffer === '' ? '' : '\n') + line;
    lines++;
    const statements = splitStatements(buffer);
    if (buffer.trim() === '' || !/;\s*$/.test(buffer)) {
      if (/^\s*(quit|exit)\s*$/i.test(buffer)) break;
      rl.setPrompt(buffer.trim() === '' ? 'floe> ' : '   -> ');
      rl.prompt();
      continue;
    }
    if (history !== undefined && lines > 1) history.splice(0, Math.min(lines, history.length), buffer.replace(/\s*\n\s*/g, ' '));
    buffer = '';
    lines = 0;
    for (const statement of statements) {
      running = new AbortController();
      try {
        await runOne(statement, running.signal);
      } catch (e) {
        process.stderr.write(`floe: ${e instanceof Error ? e.message : String(e)}\n`);
      } finally {
        running = undefined;
      }
    }
    rl.setPrompt('floe> ');
    rl.prompt();
  }
  rl.close();
  return 0;
}
