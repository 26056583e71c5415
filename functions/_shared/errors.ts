/**
 * The one error shape of the API, and the one place that maps thrown errors to it:
 * `{ error: { code, message, details? } }`. Handlers throw `ApiError`s; SQL raises SQLSTATEs,
 * mapped by `SQLSTATE_TO_ERROR` (custom codes are listed in docs/error-codes.md).
 */

export type ErrorCode =
  | "invalid_request"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | "unprocessable"
  | "rate_limited"
  | "internal"
  | "unavailable"
  // Codes of the domains (contract, "Error codes added by these domains"):
  | "provider_disabled"
  | "reauthentication_required"
  | "invalid_transition"
  | "insufficient_stock"
  | "insufficient_funds"
  | "not_erc20"
  | "chain_unavailable"
  | "payment_provider_unavailable"
  | "blocked";

export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  provider_disabled: 400,
  reauthentication_required: 403,
  invalid_transition: 422,
  insufficient_stock: 422,
  insufficient_funds: 422,
  not_erc20: 422,
  chain_unavailable: 503,
  payment_provider_unavailable: 503,
  blocked: 403,
};

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

/** A failure with a known meaning; its message is shown to the caller. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
  get status(): number {
    return STATUS_OF[this.code];
  }
}

export const badRequest = (message: string, details?: unknown) =>
  new ApiError("invalid_request", message, details);
export const unauthenticated = (message = "Sign in to continue.") =>
  new ApiError("unauthenticated", message);
export const forbidden = (message = "You are not allowed to do this.") =>
  new ApiError("forbidden", message);
export const notFound = (message = "Not found.") => new ApiError("not_found", message);
export const conflict = (message: string, details?: unknown) =>
  new ApiError("conflict", message, details);
export const unprocessable = (message: string, details?: unknown) =>
  new ApiError("unprocessable", message, details);

/**
 * SQLSTATEs with a meaning for the caller. Custom `AGnnn` codes carry the HTTP status in their
 * digits; their messages are written for users. Standard codes map to generic messages, so no
 * internal text (table or constraint names) ever reaches a response.
 */
const SQLSTATE_TO_ERROR: Record<string, { code: ErrorCode; message?: string }> = {
  AG400: { code: "invalid_request" },
  AG401: { code: "unauthenticated" },
  AG403: { code: "forbidden" },
  AG404: { code: "not_found" },
  AG409: { code: "conflict" },
  AG415: { code: "unsupported_media_type" },
  AG422: { code: "unprocessable" },
  AG503: { code: "unavailable" },
  "42501": { code: "forbidden", message: "You are not allowed to do this." },
  "23505": { code: "conflict", message: "This already exists." },
  "23503": { code: "unprocessable", message: "A referenced record does not exist." },
  "23514": { code: "invalid_request", message: "A value is out of the allowed range." },
  "22P02": { code: "invalid_request", message: "A value has the wrong format." },
  "22001": { code: "invalid_request", message: "A value is too long." },
  "22021": { code: "invalid_request", message: "A value holds a character that is not allowed." },
  "22P05": { code: "invalid_request", message: "A value holds a character that is not allowed." },
  "22007": { code: "invalid_request", message: "A date or time has the wrong format." },
  "22008": { code: "invalid_request", message: "A date or time is out of range." },
  "22003": { code: "invalid_request", message: "A number is out of range." },
  "40001": { code: "conflict", message: "A concurrent change won; try again." },
  "40P01": { code: "conflict", message: "A concurrent change won; try again." },
};

/**
 * "The database is not there right now": its connection was refused, reset, broken or closed, or
 * Postgres is shutting down, starting or full. 503 with Retry-After: the pool reconnects by
 * itself (db.ts), so the same request a moment later succeeds.
 */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTCONN",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P01", // admin_shutdown: a fast or immediate stop
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up or recovering
  "53300", // too_many_connections
  "08000", // connection_exception and its subclasses
  "08001",
  "08003",
  "08004",
  "08006",
]);

/** Whether `err` says the database (or its connection) is not there right now. */
export function isConnectionGone(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && UNAVAILABLE_CODES.has(code);
}

/** Seconds a client waits before trying again after a 503 of the database. */
const UNAVAILABLE_RETRY_AFTER = "1";

/**
 * A custom SQLSTATE (`AGnnn`) may name a more specific code of the same status in its HINT and
 * carry `details` as JSON in its DETAIL:
 *
 * @example
 * raise exception 'not enough stock' using errcode = 'AG422', hint = 'insufficient_stock',
 *   detail = jsonb_build_object('items', short)::text;
 */
function customError(e: { code: string; message?: string; hint?: string; detail?: string }) {
  const mapped = SQLSTATE_TO_ERROR[e.code];
  if (!mapped || !e.code.startsWith("AG")) return null;
  const named = e.hint as ErrorCode | undefined;
  const code = named && STATUS_OF[named] === STATUS_OF[mapped.code] ? named : mapped.code;
  let details: unknown;
  if (e.detail) {
    try {
      details = JSON.parse(e.detail);
    } catch {
      details = undefined;
    }
  }
  return new ApiError(code, e.message ?? "Request refused.", details);
}

/** Turns any thrown value into an ApiError, or null when it is unexpected (a 500). */
export function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  const e = err as { code?: string; message?: string; hint?: string; detail?: string } | null;
  if (e && typeof e.code === "string") {
    const custom = customError(e as { code: string });
    if (custom) return custom;
    const mapped = SQLSTATE_TO_ERROR[e.code];
    if (mapped) {
      return new ApiError(mapped.code, mapped.message ?? e.message ?? "Request refused.");
    }
    if (isConnectionGone(e)) {
      return new ApiError(
        "unavailable",
        "The service is temporarily unavailable; try again in a moment.",
        undefined,
        { "Retry-After": UNAVAILABLE_RETRY_AFTER },
      );
    }
  }
  return null;
}

export function errorBody(err: ApiError): ErrorBody {
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(err.details === undefined ? {} : { details: err.details }),
    },
  };
}
