/**
 * The API's errors as exceptions, one class per error code.
 *
 * Every answer that is not a success carries `{"error": {"code", "message"}}`; the client throws
 * the class of its code ({@link BY_CODE}) with the HTTP status, the message, the request id the
 * server logged it under (`X-Request-Id`), and for `unavailable` the `Retry-After` it sent. An
 * answer without that envelope (a proxy's page, a crash) is thrown by its status: `Unavailable`
 * for 502, 503 and 504, `ServerError` for any other 5xx, else `BoardError` itself.
 */
import type { components } from "./openapi.js";

/** Every code an error envelope may carry (`unavailable` has its own envelope in the document). */
export type ErrorCode = components["schemas"]["ErrorDetail"]["code"] | "unavailable";

export interface ErrorDetails {
  /** The HTTP status; 0 when there was no answer (or the error came inside a report's `next`). */
  status?: number;
  /** The answer's `X-Request-Id`: the server logged the call under it. */
  requestId?: string | null;
  /** A code this client does not know yet, kept as the server sent it. */
  code?: string;
  cause?: unknown;
}

/** An answer of the API that is not a success. */
export class BoardError extends Error {
  static readonly code: string = "error";
  /** The error code (`invalid`, `conflict`, …): the class's, or an unknown one as sent. */
  readonly code: string;
  readonly status: number;
  readonly requestId: string | null;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = details.code ?? (new.target as typeof BoardError).code;
    this.status = details.status ?? 0;
    this.requestId = details.requestId ?? null;
  }
}

/** Bad input: `field` names it (`title`, `items[3].queue`, `next.wait_seconds`). */
export class Invalid extends BoardError {
  static override readonly code = "invalid";

  /** The field the server named: its messages read `<field>: <problem>`. */
  get field(): string {
    const colon = this.message.indexOf(": ");
    return (colon < 0 ? this.message : this.message.slice(0, colon)).trim();
  }
}

/** A missing, unknown, revoked or expired token. */
export class Unauthorized extends BoardError {
  static override readonly code = "unauthorized";
}

/** A verb or queue outside the endpoint's scope. */
export class Forbidden extends BoardError {
  static override readonly code = "forbidden";
}

/** No such todo (or schedule) for this endpoint; also an unknown verb. */
export class NotFound extends BoardError {
  static override readonly code = "not_found";
}

/**
 * The todo is not in a state this call can act on (another holder, a lapsed lease, a wrong lease
 * token, a key in flight).
 */
export class Conflict extends BoardError {
  static override readonly code = "conflict";
}

/**
 * A heartbeat or report for a todo this worker no longer holds: its lease lapsed and the todo was
 * reaped or taken over, or the lease token is not the lease's. Drop the work; do not report it again.
 */
export class LeaseLost extends Conflict {}

/**
 * A claim while a team admin has paused this endpoint's claims (HTTP 423); the message says who.
 * Reports still land. Claim again later: the {@link Worker} waits it out.
 */
export class Paused extends BoardError {
  static override readonly code = "paused";
}

/** The request body is over the server's limit. */
export class TooLarge extends BoardError {
  static override readonly code = "too_large";
}

/** A verb called with another method than POST. */
export class MethodNotAllowed extends BoardError {
  static override readonly code = "method_not_allowed";
}

/**
 * The server or its database could not answer. `retryAfter` is the server's `Retry-After` in
 * seconds (null when it sent none). `outcomeUnknown` is true when the call may have landed
 * although no answer said so: the connection broke after the request was sent, it timed out, or a
 * proxy answered 502 or 504; it is false for Board's own `503` (nothing was written) and when the
 * request never left (the connection was refused). `status` is 0 when there was no answer at all.
 */
export class Unavailable extends BoardError {
  static override readonly code = "unavailable";
  readonly retryAfter: number | null;
  outcomeUnknown: boolean;

  constructor(message: string, details: ErrorDetails & { retryAfter?: number | null; outcomeUnknown?: boolean } = {}) {
    super(message, { status: 503, ...details });
    this.retryAfter = details.retryAfter ?? null;
    this.outcomeUnknown = details.outcomeUnknown ?? false;
  }
}

/** An internal error of the server (its log has the details under `requestId`). */
export class ServerError extends BoardError {
  static override readonly code = "internal";
}

export const BY_CODE: Readonly<Record<ErrorCode, typeof BoardError>> = {
  invalid: Invalid,
  unauthorized: Unauthorized,
  forbidden: Forbidden,
  not_found: NotFound,
  conflict: Conflict,
  paused: Paused,
  too_large: TooLarge,
  method_not_allowed: MethodNotAllowed,
  unavailable: Unavailable,
  internal: ServerError,
};

/**
 * Each code's HTTP status (docs/api.md, "Errors"): the status of an error met inside an answer (a
 * report's `next`), which has none of its own.
 */
export const STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  too_large: 413,
  paused: 423,
  internal: 500,
  unavailable: 503,
};

/** The verbs whose `conflict` means the lease is gone. */
export const LEASE_VERBS: ReadonlySet<string> = new Set(["heartbeat", "complete", "fail", "release"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCode(code: string | null): code is ErrorCode {
  return code !== null && Object.hasOwn(BY_CODE, code);
}

/**
 * The exception for a refused call: `body` is the answer's JSON (null when it had none), as
 * `{"error": {"code", "message"}}`; `retryAfter` is the header's (else the envelope's is taken).
 */
export function errorFor(
  verb: string,
  status: number,
  body: unknown,
  requestId: string | null = null,
  retryAfter: number | null = null,
): BoardError {
  const detail = isObject(body) && isObject(body.error) ? body.error : null;
  const code = typeof detail?.code === "string" ? detail.code : null;
  const message =
    typeof detail?.message === "string"
      ? detail.message
      : code === null
        ? `${verb}: HTTP ${status} without an error body`
        : `${verb}: ${code}`;
  const details = { status, requestId };
  if (code === "conflict" && LEASE_VERBS.has(verb)) {
    return new LeaseLost(message, details);
  }
  if (code === "unavailable" || (code === null && [502, 503, 504].includes(status))) {
    const envelope = detail?.retry_after;
    const fromBody = typeof envelope === "number" && Number.isFinite(envelope) && envelope >= 0 ? envelope : null;
    return new Unavailable(message, { ...details, retryAfter: retryAfter ?? fromBody });
  }
  if (isCode(code)) {
    return new BY_CODE[code](message, details);
  }
  const cls = status >= 500 ? ServerError : BoardError;
  return new cls(message, code === null ? details : { ...details, code });
}
