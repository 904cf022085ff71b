/**
 * Typed access to fields of parsed JSON. Every failure is a `BadRequestException` naming the field,
 * because the same readers parse REST request bodies (where a wrong shape is the client's fault) and
 * metadata files (where the caller may re-wrap it).
 */
import { badRequest } from './errors.js';
import type { JsonObject, JsonValue } from './json.js';

/** Asserts `value` is a JSON object. */
export function asObject(value: JsonValue | undefined, what: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`Cannot parse ${what}: expected an object`);
  return value as JsonObject;
}

/** Asserts `value` is a JSON array. */
export function asArray(value: JsonValue | undefined, what: string): readonly JsonValue[] {
  if (!Array.isArray(value)) throw badRequest(`Cannot parse ${what}: expected an array`);
  return value;
}

/** Own-property read (so `constructor` or `__proto__` never come from the prototype). */
export function field(obj: JsonObject, key: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

export function requiredString(obj: JsonObject, key: string, what: string): string {
  const v = field(obj, key);
  if (typeof v !== 'string') throw badRequest(`Cannot parse missing or non-string '${key}' in ${what}`);
  return v;
}

export function optionalString(obj: JsonObject, key: string, what: string): string | undefined {
  const v = field(obj, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw badRequest(`Cannot parse non-string '${key}' in ${what}`);
  return v;
}

export function requiredBoolean(obj: JsonObject, key: string, what: string): boolean {
  const v = field(obj, key);
  if (typeof v !== 'boolean') throw badRequest(`Cannot parse missing or non-boolean '${key}' in ${what}`);
  return v;
}

/** A 32-bit (or at least safe) integer. */
export function requiredInt(obj: JsonObject, key: string, what: string): number {
  const v = field(obj, key);
  if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`Cannot parse missing or non-integer '${key}' in ${what}`);
  return v;
}

export function optionalInt(obj: JsonObject, key: string, what: string): number | undefined {
  const v = field(obj, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`Cannot parse non-integer '${key}' in ${what}`);
  return v;
}

/** An int64 that is always returned as `bigint` (snapshot ids). */
export function requiredLong(obj: JsonObject, key: string, what: string): bigint {
  const v = field(obj, key);
  const n = toLong(v);
  if (n === undefined) throw badRequest(`Cannot parse missing or non-integer '${key}' in ${what}`);
  return n;
}

export function optionalLong(obj: JsonObject, key: string, what: string): bigint | undefined {
  const v = field(obj, key);
  if (v === undefined || v === null) return undefined;
  const n = toLong(v);
  if (n === undefined) throw badRequest(`Cannot parse non-integer '${key}' in ${what}`);
  return n;
}

/** A JSON integer as `bigint`, or `undefined` if not an integer. */
export function toLong(v: JsonValue | undefined): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return undefined;
}

/** A string → string map (properties, summaries) as a `Map`, since keys are user-supplied. */
export function stringMap(value: JsonValue | undefined, what: string): ReadonlyMap<string, string> {
  if (value === undefined || value === null) return new Map();
  const obj = asObject(value, what);
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v !== 'string') throw badRequest(`Cannot parse ${what}: value of '${k}' is not a string`);
    out.set(k, v);
  }
  return out;
}

export function intArray(value: JsonValue | undefined, what: string): readonly number[] {
  return asArray(value, what).map((v) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`Cannot parse ${what}: expected integers`);
    return v;
  });
}

export function stringArray(value: JsonValue | undefined, what: string): readonly string[] {
  return asArray(value, what).map((v) => {
    if (typeof v !== 'string') throw badRequest(`Cannot parse ${what}: expected strings`);
    return v;
  });
}
