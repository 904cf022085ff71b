/**
 * SCIM's own error vocabulary (RFC 7644 §3.12): an HTTP status, an optional `scimType` and a
 * detail, answered as `{schemas: [Error URN], status, scimType, detail}`. Identity providers read
 * `scimType` (Entra ID and Okta both key their retry and conflict handling on `uniqueness`), so
 * SCIM refusals keep to this format instead of the query interface's registry codes, as the token
 * endpoint keeps to RFC 6749's.
 */

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** RFC 7644 Table 9. */
export type ScimType =
  | 'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax'
  | 'invalidPath' | 'noTarget' | 'invalidValue' | 'invalidVers' | 'sensitive';

export class ScimError extends Error {
  constructor(readonly status: number, readonly detail: string, readonly scimType?: ScimType) {
    super(detail);
    this.name = 'ScimError';
  }
}

export function isScimError(e: unknown): e is ScimError {
  return e instanceof ScimError;
}

/** The wire body of an error; `status` is a string, as RFC 7644's examples write it. */
export function scimErrorBody(status: number, detail: string, scimType?: ScimType): Record<string, unknown> {
  return { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

export const badValue = (detail: string): ScimError => new ScimError(400, detail, 'invalidValue');
export const badSyntax = (detail: string): ScimError => new ScimError(400, detail, 'invalidSyntax');
export const badPath = (detail: string): ScimError => new ScimError(400, detail, 'invalidPath');
export const notFound = (id: string): ScimError => new ScimError(404, `no User ${id}`);
