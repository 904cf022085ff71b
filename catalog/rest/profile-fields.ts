/**
 * Checks shared by the storage-profile parsers (`wire.ts` for S3, `vending-wire.ts`, `adls-wire.ts`,
 * `gcs-wire.ts`): unknown fields and endpoint URLs. Every failure is a 400 `BadRequestException`
 * that names the field, never its value (a profile carries secrets).
 */
import type { JsonObject } from '../iceberg/json.js';
import { badRequest } from './errors.js';

/** Rejects any key of `o` not in `allowed`: a misspelt profile field must not be silently ignored. */
export function onlyFields(o: JsonObject, allowed: readonly string[], what: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw badRequest(`Unknown field '${k}' in ${what}`);
}

/** `value` as a URL when it parses, is http(s) and carries no user or password; else `undefined`. */
function httpUrlWithoutCredentials(value: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') return undefined;
  return url;
}

/**
 * An endpoint of an ADLS or GCS profile: http(s), no credentials, no query or fragment (the client
 * appends paths and its own query). Returned without trailing slashes, so paths join with one `/`.
 */
export function httpEndpoint(value: string, name: string, what: string): string {
  const url = httpUrlWithoutCredentials(value);
  if (url === undefined || url.search !== '' || url.hash !== '') {
    throw badRequest(`Invalid ${name} in ${what}: expected an http:// or https:// URL without credentials or query`);
  }
  return value.replace(/\/+$/, '');
}

/**
 * An endpoint of an S3 profile (`endpoint`, `sts-endpoint`): http(s) and no credentials. This is the
 * S3 parser's rule from before the stricter `httpEndpoint`; it is kept as it was, since catalogs
 * created with it store the value as given.
 */
export function checkS3HttpEndpoint(value: string, name: string, what: string): void {
  if (httpUrlWithoutCredentials(value) === undefined) {
    throw badRequest(`Invalid ${name} in ${what}: expected an http:// or https:// URL without credentials`);
  }
}
