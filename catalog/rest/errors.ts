/**
 * Errors of the REST catalog, named after the Java Iceberg exceptions so that `server/` can put
 * `type` straight into `{"error": {"message", "type", "code"}}`. Domain errors of the table-format
 * layer (`IcebergError`) pass through as they are; `toCatalogError` maps both to one shape.
 */
import { IcebergError } from '../iceberg/errors.js';

export type CatalogErrorType =
  | 'BadRequestException'
  | 'ValidationException'
  | 'NotAuthorizedException'
  | 'ForbiddenException'
  | 'NoSuchWarehouseException'
  | 'NoSuchNamespaceException'
  | 'NoSuchTableException'
  | 'NoSuchViewException'
  | 'NotFoundException'
  | 'AlreadyExistsException'
  | 'NamespaceNotEmptyException'
  | 'CommitFailedException'
  | 'UnprocessableEntityException'
  | 'UnsupportedOperationException'
  | 'ServiceUnavailableException'
  /** The store was lost after the commit was sent: the client must not assume either outcome. */
  | 'CommitStateUnknownException';

export const HTTP_STATUS_BY_CATALOG_ERROR: Readonly<Record<CatalogErrorType, number>> = {
  BadRequestException: 400,
  ValidationException: 400,
  NotAuthorizedException: 401,
  ForbiddenException: 403,
  NoSuchWarehouseException: 404,
  NoSuchNamespaceException: 404,
  NoSuchTableException: 404,
  NoSuchViewException: 404,
  NotFoundException: 404,
  AlreadyExistsException: 409,
  NamespaceNotEmptyException: 409,
  CommitFailedException: 409,
  UnprocessableEntityException: 422,
  UnsupportedOperationException: 406,
  ServiceUnavailableException: 503,
  CommitStateUnknownException: 500,
};

/** A user-facing catalog error. Bugs are plain `Error`s and become 500. */
export class CatalogError extends Error {
  constructor(
    readonly type: CatalogErrorType,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
    this.name = type;
  }

  get status(): number {
    return HTTP_STATUS_BY_CATALOG_ERROR[this.type];
  }
}

/** `IcebergError` (domain) or `CatalogError` (service) as one `CatalogError`; anything else undefined. */
export function toCatalogError(e: unknown): CatalogError | undefined {
  if (e instanceof CatalogError) return e;
  if (e instanceof IcebergError) return new CatalogError(e.type, e.message, { cause: e });
  return undefined;
}

export const badRequest = (message: string): CatalogError => new CatalogError('BadRequestException', message);
export const noSuchNamespace = (ns: readonly string[]): CatalogError => new CatalogError('NoSuchNamespaceException', `Namespace does not exist: ${ns.join('.')}`);
export const noSuchTable = (ns: readonly string[], name: string): CatalogError => new CatalogError('NoSuchTableException', `Table does not exist: ${[...ns, name].join('.')}`);
export const noSuchView = (ns: readonly string[], name: string): CatalogError => new CatalogError('NoSuchViewException', `View does not exist: ${[...ns, name].join('.')}`);
export const noSuchWarehouse = (name: string): CatalogError => new CatalogError('NoSuchWarehouseException', `Warehouse does not exist: ${name}`);
