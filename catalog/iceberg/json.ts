/**
 * JSON for Iceberg metadata: int64 values (snapshot ids) exceed 2^53, so `JSON.parse` would silently
 * corrupt them. `parseJson` returns integers outside the safe range as `bigint`; `stringifyJson` writes
 * `bigint` as bare digits. The REST layer must read request bodies and write responses with these two
 * functions (or equivalent) for snapshot ids to survive the trip.
 */

/** A parsed JSON value. Integers beyond ±(2^53 − 1) are `bigint`. */
export type JsonValue = null | boolean | number | bigint | string | readonly JsonValue[] | JsonObject;
/** A parsed JSON object (own enumerable keys only; a `__proto__` key is an ordinary own key). */
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

/** Thrown by `parseJson` on malformed text; `position` is the character offset. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
    this.name = 'JsonSyntaxError';
  }
}

/**
 * Texts this short nest at most MAX_DEPTH deep (a value deeper needs over 1,026 brackets), so for
 * them `JSON.parse` differs from `Parser` only in the precision of long integers.
 */
const NATIVE_MAX_LENGTH = 1024;
/** Every integer beyond ±(2^53 − 1) has 16 digits or more in a row. */
const LONG_DIGIT_RUN = /[0-9]{16}/;

/**
 * Parses JSON text, keeping unsafe integers exact as `bigint`. Short texts without a 16-digit run
 * (most request bodies: sign requests, token forms, small commits) go through the native
 * `JSON.parse`, which gives the same value there (own data keys, `__proto__` included, the last of
 * duplicate keys, -0, the same strings and numbers) several times faster; what it refuses is parsed
 * again here for the error's position.
 */
export function parseJson(text: string): JsonValue {
  if (text.length <= NATIVE_MAX_LENGTH && !LONG_DIGIT_RUN.test(text)) {
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      // Malformed: the parser below says where.
    }
  }
  return parseJsonExactly(text);
}

/** `parseJson` without the native path (the reference its property test compares with). */
export function parseJsonExactly(text: string): JsonValue {
  const parser = new Parser(text);
  parser.skipWhitespace();
  const value = parser.parseValue(0);
  parser.skipWhitespace();
  if (parser.pos !== text.length) throw new JsonSyntaxError('Unexpected trailing characters', parser.pos);
  return value;
}

const MAX_DEPTH = 512;

class Parser {
  pos = 0;
  constructor(private readonly text: string) {}

  skipWhitespace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else break;
    }
  }

  parseValue(depth: number): JsonValue {
    if (depth > MAX_DEPTH) throw new JsonSyntaxError('Nesting too deep', this.pos);
    const c = this.text[this.pos];
    switch (c) {
      case '{':
        return this.parseObject(depth);
      case '[':
        return this.parseArray(depth);
      case '"':
        return this.parseString();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.parseNumber();
        throw new JsonSyntaxError(c === undefined ? 'Unexpected end of input' : `Unexpected character ${JSON.stringify(c)}`, this.pos);
    }
  }

  private literal<T extends JsonValue>(word: string, value: T): T {
    if (this.text.startsWith(word, this.pos)) {
      this.pos += word.length;
      return value;
    }
    throw new JsonSyntaxError('Invalid literal', this.pos);
  }

  private parseObject(depth: number): JsonObject {
    const out: Record<string, JsonValue> = {};
    this.pos++;
    this.skipWhitespace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.pos] !== '"') throw new JsonSyntaxError('Expected a string key', this.pos);
      const key = this.parseString();
      this.skipWhitespace();
      if (this.text[this.pos] !== ':') throw new JsonSyntaxError("Expected ':'", this.pos);
      this.pos++;
      this.skipWhitespace();
      const value = this.parseValue(depth + 1);
      // defineProperty so that a "__proto__" key stays data, not a prototype change.
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      this.skipWhitespace();
      const sep = this.text[this.pos];
      this.pos++;
      if (sep === '}') return out;
      if (sep !== ',') throw new JsonSyntaxError("Expected ',' or '}'", this.pos - 1);
    }
  }

  private parseArray(depth: number): JsonValue[] {
    const out: JsonValue[] = [];
    this.pos++;
    this.skipWhitespace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipWhitespace();
      out.push(this.parseValue(depth + 1));
      this.skipWhitespace();
      const sep = this.text[this.pos];
      this.pos++;
      if (sep === ']') return out;
      if (sep !== ',') throw new JsonSyntaxError("Expected ',' or ']'", this.pos - 1);
    }
  }

  private parseString(): string {
    const t = this.text;
    const start = ++this.pos;
    // Fast path: no escapes.
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) {
        const s = t.slice(start, this.pos);
        this.pos++;
        return s;
      }
      if (c === 0x5c || c < 0x20) break;
      this.pos++;
    }
    let out = t.slice(start, this.pos);
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) {
        this.pos++;
        return out;
      }
      if (c < 0x20) throw new JsonSyntaxError('Control character in string', this.pos);
      if (c === 0x5c) {
        const e = t[this.pos + 1];
        this.pos += 2;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const hex = t.slice(this.pos, this.pos + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError('Invalid unicode escape', this.pos);
            out += String.fromCharCode(parseInt(hex, 16));
            this.pos += 4;
            break;
          }
          default:
            throw new JsonSyntaxError('Invalid escape', this.pos - 1);
        }
      } else {
        out += t[this.pos];
        this.pos++;
      }
    }
    throw new JsonSyntaxError('Unterminated string', start - 1);
  }

  private parseNumber(): number | bigint {
    const t = this.text;
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(t.slice(this.pos, this.pos + 400));
    if (m === null) throw new JsonSyntaxError('Invalid number', this.pos);
    const s = m[0];
    this.pos += s.length;
    if (m[2] === undefined && m[3] === undefined) {
      const n = Number(s);
      return Number.isSafeInteger(n) ? n : BigInt(s);
    }
    return Number(s);
  }
}

/**
 * Serializes like `JSON.stringify`, plus `bigint` as digits and `Map` as an object. `pretty` reproduces
 * Jackson's DefaultPrettyPrinter, which Java Iceberg uses for `*.metadata.json`:
 * `"key" : value`, objects indented by two spaces, arrays inline as `[ a, b ]`, empty as `{ }` / `[ ]`.
 */
export function stringifyJson(value: unknown, options: { readonly pretty?: boolean } = {}): string {
  return options.pretty === true ? writePretty(value, 0) : writeCompact(value);
}

function scalar(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`Cannot serialize ${value} as JSON`);
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'string':
      return JSON.stringify(value);
    default:
      return undefined;
  }
}

function entriesOf(value: object): [string, unknown][] {
  const source = value instanceof Map ? [...(value as Map<unknown, unknown>).entries()] : Object.entries(value);
  return source.filter(([, v]) => v !== undefined).map(([k, v]) => [String(k), v]);
}

function writeCompact(value: unknown): string {
  const s = scalar(value);
  if (s !== undefined) return s;
  if (Array.isArray(value)) return `[${value.map((v) => writeCompact(v === undefined ? null : v)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${entriesOf(value).map(([k, v]) => `${JSON.stringify(k)}:${writeCompact(v)}`).join(',')}}`;
  }
  throw new TypeError(`Cannot serialize ${typeof value} as JSON`);
}

function writePretty(value: unknown, level: number): string {
  const s = scalar(value);
  if (s !== undefined) return s;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[ ]';
    return `[ ${value.map((v) => writePretty(v === undefined ? null : v, level)).join(', ')} ]`;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = entriesOf(value);
    if (entries.length === 0) return '{ }';
    const inner = '  '.repeat(level + 1);
    const body = entries.map(([k, v]) => `\n${inner}${JSON.stringify(k)} : ${writePretty(v, level + 1)}`).join(',');
    return `{${body}\n${'  '.repeat(level)}}`;
  }
  throw new TypeError(`Cannot serialize ${typeof value} as JSON`);
}
