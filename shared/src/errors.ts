/**
 * The contract's refusal codes (CONTRACT.md §3, specification §7) and the one table
 * from code to HTTP status. Every surface (REST, GraphQL, MCP) reads this table.
 */
export const ERROR_STATUS = {
  unauthenticated: 401,
  insufficient_scope: 403,
  approval_required: 403,
  policy_denied: 403,
  unknown_tool: 404,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_conflict: 409,
  conflict: 409,
  body_too_large: 413,
  uri_too_long: 414,
  invalid_input: 422,
  /** `X-Dry-Run: true` on a write tool that cannot say beforehand what it would do (it declares no preview): nothing was done. */
  dry_run_unsupported: 400,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  outcome_unknown: 502,
  unavailable: 503,
} as const;

/** A stable machine code of the contract. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The JSON body of a refusal, exactly as callers see it. */
export interface RefusalBody {
  error: string;
  code: ErrorCode;
  field?: string;
  approval_id?: string;
}

/**
 * The one error class of Cuadra. Recognise it by `code` (see {@link isCuadraError}),
 * never by `instanceof` across packages.
 */
export class CuadraError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly extra: Record<string, unknown>;
  /**
   * Set by a handler that failed before it wrote anything (a peer service that did not answer a
   * lookup made first): an `unavailable` then stays `unavailable` instead of `outcome_unknown`.
   */
  readonly beforeAnyEffect: boolean;

  constructor(code: ErrorCode, message: string, options: { field?: string; extra?: Record<string, unknown>; cause?: unknown; beforeAnyEffect?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = 'CuadraError';
    this.code = code;
    this.field = options.field;
    this.extra = options.extra ?? {};
    this.beforeAnyEffect = options.beforeAnyEffect ?? false;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): RefusalBody {
    return refusalBody(this.code, this.message, this.field, this.extra);
  }
}

/** True for any object carrying one of the contract's codes (works across package copies). */
export function isCuadraError(err: unknown): err is CuadraError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'CuadraError'
    && isErrorCode((err as { code?: unknown }).code);
}

/** True when `code` is one of the contract's codes. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code);
}

/** HTTP status for a code; unknown codes are `internal`. */
export function statusOf(code: string): number {
  return isErrorCode(code) ? ERROR_STATUS[code] : 500;
}

/** Builds the refusal body; `field` is kept only for `invalid_input`. */
export function refusalBody(code: ErrorCode, message: string, field?: string, extra: Record<string, unknown> = {}): RefusalBody {
  const body: RefusalBody = { error: message, code };
  if (code === 'invalid_input') body.field = field ?? '';
  if (typeof extra.approval_id === 'string') body.approval_id = extra.approval_id;
  return body;
}

/** The generic sentence given for anything unexpected: no stack, no internals. */
export const INTERNAL_MESSAGE = 'Something went wrong on our side. Try again later (with the same Idempotency-Key a retry never runs twice).';

/** The sentence of `outcome_unknown` (CONTRACT.md §9). */
export const OUTCOME_UNKNOWN_MESSAGE = 'The call reached the service that runs it, but no outcome came back: it may or may not have taken effect. Retry with the same Idempotency-Key to learn the real outcome (it never runs twice).';

/**
 * Turns anything thrown into a contract error. Unknown errors become `internal`
 * with the generic sentence; the caller of this function logs the original.
 */
export function toCuadraError(err: unknown): CuadraError {
  if (isCuadraError(err)) return err;
  if (storeUnreachable(err)) return new CuadraError('unavailable', 'A store behind this service (the database or Redis) cannot be reached right now; nothing was done. Try again shortly.', { cause: err });
  return new CuadraError('internal', INTERNAL_MESSAGE, { cause: err });
}

/**
 * True for the errors of a database or Redis that cannot be reached (CONTRACT.md §9: then every
 * surface answers `unavailable`, never `internal`): the MongoDB driver's network and selection
 * errors (and db.ts's refusal while the server is known down), a socket the server closed under a
 * write (EPIPE, ECONNRESET), and ioredis giving up on a command or writing to a closed connection.
 */
export function storeUnreachable(err: unknown, depth = 0): boolean {
  const e = err as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown; errorResponse?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.name === 'string' && /^(Mongo(Network|ServerSelection|NotConnected|Topology|PoolCleared)\w*|DatabaseKnownDownError|MaxRetriesPerRequestError)$/.test(e.name)) return true;
  if (typeof e.message === 'string' && /^(Connection is closed\.|Stream isn't writeable and enableOfflineQueue options is false)/.test(e.message)) return true;
  // The driver can write a command on a pooled socket its server has just closed (the server killed
  // between the check-out and the write): Node's own EPIPE/ECONNRESET reaches us unwrapped.
  if ((e.code === 'EPIPE' || e.code === 'ECONNRESET') && typeof e.message === 'string') return true;
  // A bulk write (insertMany, bulkWrite) wraps the network error it met: its cause or its errorResponse.
  return depth < 3 && (storeUnreachable(e.cause, depth + 1) || storeUnreachable(e.errorResponse, depth + 1));
}
