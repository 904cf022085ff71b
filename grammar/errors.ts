/**
 * The one error registry of Floe's query interface: every user-facing error has a code, a
 * SQLSTATE, an HTTP status and a message template. `/api` answers `{error, message, sql_state}`
 * from it; history stores the rendered message. Bugs are `INTERNAL_ERROR` (XX000, 500) and are
 * logged, never shown with details.
 *
 * It lives in `grammar/` because grammar is the leaf context every other context may import.
 */

/** Definition of one error code. `message` renders the parameters into the user-facing text. */
export interface ErrorDefinition<P> {
  readonly sqlState: string;
  readonly httpStatus: number;
  readonly message: (params: P) => string;
}

function def<P = Record<string, never>>(sqlState: string, httpStatus: number, message: (params: P) => string): ErrorDefinition<P> {
  return { sqlState, httpStatus, message };
}

/** The registry. Add codes here; the docs table in docs/errors.md is checked against it by a test. */
export const ERRORS = {
  SYNTAX_ERROR: def<{ line: number; column: number; expected: string; detail?: string }>('42601', 400, (p) =>
    `syntax error at line ${p.line}, column ${p.column}: expected ${p.expected}${p.detail ? ` (${p.detail})` : ''}`),
  UNSUPPORTED_STATEMENT: def<{ what: string }>('0A000', 400, (p) => `not supported: ${p.what}`),
  UNSUPPORTED_CONSTRAINT: def<{ constraint: string; on: string }>('0A000', 400, (p) =>
    `not supported: ${p.constraint} on ${p.on} (an Iceberg table keeps NOT NULL and PRIMARY KEY only, as required and identifier fields)`),
  UNSUPPORTED_INDEX: def<{ statement: string }>('0A000', 400, (p) =>
    `not supported: ${p.statement} (Iceberg tables have no indexes; Floe skips files by partition values and column statistics, so partition or sort the table instead)`),
  INVALID_TABLE_DEFINITION: def<{ detail: string }>('42P16', 400, (p) => `invalid table definition: ${p.detail}`),
  AMBIGUOUS_NAME: def<{ name: string; readings: string; remedy: string }>('42P09', 400, (p) =>
    `name ${p.name} is ambiguous: it reads as ${p.readings}; ${p.remedy}`),
  UNDEFINED_TABLE: def<{ name: string }>('42P01', 404, (p) => `table or view does not exist: ${p.name}`),
  UNDEFINED_SCHEMA: def<{ name: string }>('3F000', 404, (p) => `schema does not exist: ${p.name}`),
  UNDEFINED_CATALOG: def<{ name: string }>('3D000', 404, (p) => `catalog does not exist: ${p.name}`),
  UNDEFINED_COLUMN: def<{ name: string }>('42703', 400, (p) => `column does not exist: ${p.name}`),
  AMBIGUOUS_COLUMN: def<{ name: string; candidates: string }>('42702', 400, (p) => `column reference ${p.name} is ambiguous: the table has columns ${p.candidates} that differ only in case; quote the exact name`),
  UNDEFINED_FUNCTION: def<{ name: string }>('42883', 400, (p) => `function does not exist: ${p.name}`),
  DUPLICATE_OBJECT: def<{ kind: string; name: string }>('42710', 409, (p) => `${p.kind} already exists: ${p.name}`),
  DUPLICATE_TABLE: def<{ name: string }>('42P07', 409, (p) => `table already exists: ${p.name}`),
  DATATYPE_MISMATCH: def<{ detail: string }>('42804', 400, (p) => `type mismatch: ${p.detail}`),
  INVALID_PARAMETER: def<{ name: string; detail: string }>('22023', 400, (p) => `invalid value for ${p.name}: ${p.detail}`),
  DIVISION_BY_ZERO: def('22012', 400, () => 'division by zero'),
  NUMERIC_OUT_OF_RANGE: def<{ detail: string }>('22003', 400, (p) => `numeric value out of range: ${p.detail}`),
  INVALID_TEXT_REPRESENTATION: def<{ detail: string }>('22P02', 400, (p) => `invalid input: ${p.detail}`),
  DATA_EXCEPTION: def<{ detail: string }>('22000', 400, (p) => `data exception: ${p.detail}`),
  CARDINALITY_VIOLATION: def<{ detail: string }>('21000', 400, (p) => `cardinality violation: ${p.detail}`),
  PERMISSION_DENIED: def<{ detail: string }>('42501', 403, (p) => `permission denied: ${p.detail}`),
  NOT_AUTHENTICATED: def<{ detail: string }>('28000', 401, (p) => `not authenticated: ${p.detail}`),
  QUERY_CANCELLED: def<{ reason: string }>('57014', 409, (p) => `query cancelled: ${p.reason}`),
  SERVER_SHUTDOWN: def('57P01', 503, () => 'query cancelled: the server is shutting down; retry on another replica or after it restarts'),
  QUERY_TIMEOUT: def<{ limitMs: number; source: string }>('57014', 408, (p) => `query cancelled: exceeded ${p.source} timeout of ${p.limitMs} ms`),
  OUT_OF_MEMORY: def<{ detail: string }>('53200', 507, (p) => `out of memory: ${p.detail}`),
  QUEUE_FULL: def<{ group: string; limit: number }>('53300', 429, (p) => `resource group ${p.group} queue is full (max_queued_queries = ${p.limit})`),
  RESULT_TOO_LARGE: def<{ limit: number; unit: string }>('54000', 413, (p) => `result exceeds the limit of ${p.limit} ${p.unit}; add a LIMIT or narrow the query`),
  COMMIT_CONFLICT: def<{ detail: string }>('40001', 409, (p) => `commit conflict: ${p.detail}`),
  // The metadata store was lost after the commit was sent (PostgreSQL's transaction_resolution_unknown;
  // /v1's CommitStateUnknownException): the write may or may not have happened.
  COMMIT_STATE_UNKNOWN: def<{ detail: string }>('08007', 500, (p) =>
    `commit state unknown: ${p.detail}; the statement may or may not have taken effect: read the table before running it again`),
  // Bulk loading (docs/loading.md). A COPY that fails under ON_ERROR = ABORT_STATEMENT commits nothing.
  LOAD_FILE_ERROR: def<{ file: string; line: number; column: number; reason: string }>('22P04', 400, (p) =>
    `bad row in ${p.file} at line ${p.line}, column ${p.column}: ${p.reason}; nothing was loaded (ON_ERROR = CONTINUE or SKIP_FILE loads the rest)`),
  LOAD_FILE_UNREADABLE: def<{ file: string; reason: string }>('22P04', 400, (p) =>
    `cannot load ${p.file}: ${p.reason}; nothing was loaded (ON_ERROR = CONTINUE or SKIP_FILE loads the other files)`),
  UPLOAD_TOO_LARGE: def<{ limit: number }>('54000', 413, (p) => `upload exceeds its size cap of ${p.limit} bytes; nothing was stored (use a multipart upload for larger files)`),
  LOAD_FILE_TOO_LARGE: def<{ file: string; bytes: number; limit: number }>('54000', 400, (p) =>
    `cannot load ${p.file}: it is ${p.bytes} bytes, over the limit of ${p.limit} (loading.max_file_bytes); split it; nothing was loaded`),
  // The two codes the service spec names (Errors §2) keep its spelling, since clients match on it.
  InvalidInvitation: def('22023', 400, () => 'invitation is invalid, expired or already redeemed'),
  LegalHoldActive: def<{ name: string }>('55000', 409, (p) => `user ${p.name} is under legal hold`),
  OBJECT_IN_USE: def<{ detail: string }>('2BP01', 409, (p) => `cannot drop: ${p.detail}`),
  INVALID_STATE: def<{ detail: string }>('55000', 409, (p) => `invalid state: ${p.detail}`),
  PASSWORD_POLICY: def<{ detail: string }>('28P01', 400, (p) => `password does not meet the tenant policy: ${p.detail}`),
  INVALID_REQUEST: def<{ detail: string }>('22023', 400, (p) => `invalid request: ${p.detail}`),
  NOT_FOUND: def<{ what: string }>('42704', 404, (p) => `not found: ${p.what}`),
  SERVICE_UNAVAILABLE: def<{ detail: string }>('08006', 503, (p) => `service unavailable: ${p.detail}`),
  // The warehouse's object store refused an operation after the retries (docs/storage.md): the
  // profile or the store needs fixing; one that is unavailable is SERVICE_UNAVAILABLE instead.
  STORAGE_ERROR: def<{ detail: string }>('58030', 500, (p) => `object storage failed: ${p.detail}`),
  REAUTHENTICATION_REQUIRED: def<{ detail: string }>('28000', 403, (p) => `recent sign-in required: ${p.detail}`),
  MFA_REQUIRED: def('28000', 401, () => 'a second factor is required for this account (send "totp", "recovery_code" or "passkey")'),
  INTERNAL_ERROR: def<{ reference: string }>('XX000', 500, (p) => `internal error (reference ${p.reference})`),
} as const;

export type ErrorCode = keyof typeof ERRORS;
type ParamsOf<C extends ErrorCode> = (typeof ERRORS)[C] extends ErrorDefinition<infer P> ? P : never;

/** A user-facing error of the query interface, rendered from the registry. */
export class FloeError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly sqlState: string;
  readonly httpStatus: number;
  readonly params: ParamsOf<C>;

  constructor(code: C, params: ParamsOf<C>) {
    const entry = ERRORS[code] as ErrorDefinition<ParamsOf<C>>;
    super(entry.message(params));
    this.name = 'FloeError';
    this.code = code;
    this.sqlState = entry.sqlState;
    this.httpStatus = entry.httpStatus;
    this.params = params;
  }

  /** The `/api` wire form. */
  toJSON(): { error: string; message: string; sql_state: string } {
    return { error: this.code, message: this.message, sql_state: this.sqlState };
  }
}

/** Creates a registry error; the params type follows the code. */
export function floeError<C extends ErrorCode>(code: C, ...params: ParamsOf<C> extends Record<string, never> ? [] : [ParamsOf<C>]): FloeError<C> {
  return new FloeError(code, (params[0] ?? {}) as ParamsOf<C>);
}

export function isFloeError(e: unknown): e is FloeError {
  return e instanceof FloeError;
}
