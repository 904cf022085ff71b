/**
 * `parseJson` takes the native `JSON.parse` for short texts without long digit runs: it must give
 * exactly what the exact parser gives (values, -0, key order, own `__proto__` keys, the last of
 * duplicate keys, bigints) and refuse what it refuses with the same error.
 */
import t from 'tap';
import fc from 'fast-check';
import { JsonSyntaxError, parseJson, parseJsonExactly, type JsonValue } from './json.js';

/** A form of a parsed value that tells apart what deep equality may not: -0, bigint, key order, prototypes. */
function shape(v: JsonValue): unknown {
  if (typeof v === 'bigint') return { bigint: v.toString() };
  if (typeof v === 'number') return Object.is(v, -0) ? { minusZero: true } : v;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(shape);
  const o = v as Record<string, JsonValue>;
  return {
    proto: Object.getPrototypeOf(o) === Object.prototype ? 'Object' : 'other',
    own: Object.getOwnPropertyNames(o).map((k) => [k, Object.getOwnPropertyDescriptor(o, k)!.enumerable, shape(o[k]!)]),
  };
}

function outcome(parse: (s: string) => JsonValue, text: string): unknown {
  try {
    return { value: shape(parse(text)) };
  } catch (e) {
    return { error: e instanceof JsonSyntaxError ? e.message : `not a JsonSyntaxError: ${String(e)}` };
  }
}

/** Printable-ASCII names for assertions (tap ends a test's output at some code points). */
const named = (s: string): string => s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).slice(0, 120);

t.test('the native path and the exact parser agree on generated JSON', async (t) => {
  let nativeSized = 0;
  fc.assert(fc.property(fc.json({ maxDepth: 4 }), (text) => {
    if (text.length <= 1024) nativeSized++;
    const native = outcome(parseJson, text);
    const exact = outcome(parseJsonExactly, text);
    if (JSON.stringify(native) !== JSON.stringify(exact)) t.fail(`differ on ${named(text)}`);
  }), { seed: 42, numRuns: 2000 });
  t.ok(nativeSized > 1000, `${nativeSized} of the texts were short enough for the native path`);
});

t.test('edge cases agree, and malformed texts get the exact parser\'s error', async (t) => {
  const texts = [
    '{"__proto__": {"polluted": true}, "a": 1}',
    '{"a": 1, "a": 2, "b": {"a": [1, 2], "a": null}}',
    '{"2": "x", "1": "y", "b": 1, "a": 2}',
    '[-0, 0, -0.0, 1e400, -1e400, 1.5e-320, 9007199254740991, -9007199254740991]',
    '[9007199254740993, 12345678901234567890, -9223372036854775808, 1234567890123456]',
    '{"s": "\\u00e9\\ud83d\\ude00\\ud800 \\/\\b\\f\\n\\r\\t\\"\\\\"}',
    '  \t\n\r{ "a" : [ ] , "b" : { } }  ',
    'true', 'false', 'null', '"x"', '0', '-1.25e+3',
    // Malformed: both refuse, with the exact parser's message and position.
    '', '{', '{"a":}', '{"a" 1}', '[1,]', '[01]', '{"a":1,}', '"\\x"', '"\u0001"', 'tru', '[1] [2]', '\ufeff{}', '{a:1}', "{'a':1}", '[NaN]', '[.5]', '[1.]', '[+1]',
  ];
  for (const text of texts) {
    t.same(outcome(parseJson, text), outcome(parseJsonExactly, text), named(text));
  }
  t.match(outcome(parseJson, '[01]'), { error: /at position/ }, 'a refusal names the position');
  const big = parseJson('{"id": 9007199254740993}') as { id: JsonValue };
  t.equal(big.id, 9007199254740993n, 'an unsafe integer stays exact');
  const proto = parseJson('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
  t.ok(Object.prototype.hasOwnProperty.call(proto, '__proto__'), '__proto__ is an own key');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing polluted');
});

t.test('nesting: the deepest text the native path takes is within the exact parser\'s limit', async (t) => {
  // 512 levels inside the top one (depth 512): allowed by both; 1,026 characters, over the native bound.
  const deepest = `${'['.repeat(513)}${']'.repeat(513)}`;
  t.same(outcome(parseJson, deepest), outcome(parseJsonExactly, deepest));
  t.notMatch(outcome(parseJson, deepest), { error: String });
  const tooDeep = `${'['.repeat(514)}${']'.repeat(514)}`;
  t.match(outcome(parseJson, tooDeep), { error: /Nesting too deep/ });
  // At the native bound (1,024 characters) nothing can reach depth 513.
  const atBound = `${'['.repeat(512)}${']'.repeat(512)}`;
  t.equal(atBound.length, 1024);
  t.same(outcome(parseJson, atBound), outcome(parseJsonExactly, atBound));
});
