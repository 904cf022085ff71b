/**
 * Long statements are parsed on a worker thread, so that one large INSERT … VALUES does not stop
 * every other request: parse time grows with the text (tens of milliseconds for a few thousand
 * characters, seconds near the length limit) and the parser is synchronous. Short texts, and texts
 * already in the parser's cache, are parsed here: a round trip to a thread costs more than they do.
 * Results go into the same cache, under the same rules, as a parse on the event loop.
 */
import { Piscina } from 'piscina';
import { FloeError } from './errors.js';
import type { ParseResult, Parser } from './parser.js';
import type { ParseReply } from './parse-worker.js';

export interface ParseOffloadOptions {
  /** Texts at least this long (characters) go to the worker. Default 4,096. */
  readonly thresholdChars?: number;
  /** Parse threads; default 1 (bulk statements are rare, and each thread loads the grammar). */
  readonly threads?: number;
}

export const DEFAULT_OFFLOAD_THRESHOLD_CHARS = 4096;

export class ParseOffload {
  readonly #threshold: number;
  readonly #pool: Piscina;

  constructor(private readonly parser: Parser, options: ParseOffloadOptions = {}) {
    this.#threshold = Math.max(1, options.thresholdChars ?? DEFAULT_OFFLOAD_THRESHOLD_CHARS);
    this.#pool = new Piscina({
      filename: new URL('./parse-worker.js', import.meta.url).href,
      minThreads: 0,
      maxThreads: Math.max(1, options.threads ?? 1),
      idleTimeout: 30_000,
    });
  }

  /** Parses like `Parser.tryParse`; long texts on the worker. */
  async tryParse(sql: string): Promise<ParseResult> {
    if (sql.length < this.#threshold) return this.parser.tryParse(sql);
    const hit = this.parser.cached(sql);
    if (hit !== undefined) return hit;
    const reply = (await this.#pool.run(sql)) as ParseReply;
    const result: ParseResult = reply.ok
      ? reply
      : { ok: false, error: new FloeError('SYNTAX_ERROR', reply.params) };
    this.parser.remember(sql, result);
    return result;
  }

  close(): Promise<void> {
    return this.#pool.destroy();
  }
}
