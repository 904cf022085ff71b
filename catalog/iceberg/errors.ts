/**
 * Errors of the table-format layer, named after the Java Iceberg exceptions so that the REST layer can
 * put `type` straight into `{"error": {"message", "type", "code"}}` (see `toErrorModel`).
 */

/** The Iceberg exception names this layer raises. */
export type IcebergErrorType =
  /** A commit requirement did not hold: the client should refresh and retry (409). */
  | 'CommitFailedException'
  /** The request is malformed: wrong JSON shape, unknown update/requirement type (400). */
  | 'BadRequestException'
  /** The request is well-formed but would make invalid metadata (400, as Java's REST server maps it). */
  | 'ValidationException'
  /** A file, snapshot or other referenced object is missing (404). */
  | 'NotFoundException'
  /** A create-if-absent write found the object already there (409). */
  | 'AlreadyExistsException'
  /** A storage scheme or format version this build cannot handle (501 / 400). */
  | 'UnsupportedOperationException';

/** HTTP status the REST layer should use for each error type. */
export const HTTP_STATUS_BY_ERROR_TYPE: Readonly<Record<IcebergErrorType, number>> = {
  CommitFailedException: 409,
  BadRequestException: 400,
  ValidationException: 400,
  NotFoundException: 404,
  AlreadyExistsException: 409,
  UnsupportedOperationException: 406,
};

/** A user-facing error of the Iceberg layer. Bugs are plain `Error`s, never this class. */
export class IcebergError extends Error {
  constructor(
    readonly type: IcebergErrorType,
    message: string,
  ) {
    super(message);
    this.name = type;
  }

  /** The HTTP status matching `type`. */
  get code(): number {
    return HTTP_STATUS_BY_ERROR_TYPE[this.type];
  }

  /** The Iceberg REST error body. */
  toErrorModel(): { readonly error: { readonly message: string; readonly type: string; readonly code: number } } {
    return { error: { message: this.message, type: this.type, code: this.code } };
  }
}

/** Shorthand for a `ValidationException`. */
export function validationError(message: string): IcebergError {
  return new IcebergError('ValidationException', message);
}

/** Shorthand for a `BadRequestException`. */
export function badRequest(message: string): IcebergError {
  return new IcebergError('BadRequestException', message);
}

/** Marks code paths that exhaustive switches make impossible. */
export function unreachable(x: never): never {
  throw new Error(`Unreachable: ${JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
}
