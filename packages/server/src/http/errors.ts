import { STATUS_CODES } from 'node:http';

/** Every error code the gateway answers with, and its HTTP status. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_API_KEY: 401,
  INVALID_ADMIN_TOKEN: 401,
  INVALID_SIGNATURE: 401,
  INSUFFICIENT_QUOTA: 402,
  TIER_REQUIRED: 403,
  WEBHOOK_LIMIT_REACHED: 403,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  WALLET_NOT_REGISTERED: 404,
  TEMPLATE_NOT_FOUND: 404,
  NOTIFICATION_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  WEBHOOK_DELIVERY_NOT_FOUND: 404,
  BROADCAST_NOT_FOUND: 404,
  PROTOCOL_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  RECEIPT_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  DUPLICATE_IDEMPOTENCY_KEY: 409,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMIT_EXCEEDED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error type services throw; the error handler turns it into the contract's body. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;
  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    // A client error is an answer, not a fault: its stack says nothing, and capturing one is
    // most of what a 4xx costs (a rate-limited client may send thousands a second).
    const status = ERROR_STATUS[code];
    const stackTraceLimit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.statusCode = status;
    this.code = code;
    this.headers = headers;
  }
}

/**
 * The refusal of a change that names none of the fields it can change. Unknown fields are dropped
 * before a handler runs, so `{}` and a body of only unknown fields both get it.
 */
export const nothingToChange = (fields: readonly string[]) => `body must have at least one of: ${fields.join(', ')}`;

/** Throws the refusal of nothingToChange unless `body` sets one of `fields`. */
export function requireSomeChange<T extends object>(body: T | undefined, fields: readonly (keyof T & string)[]): void {
  if (!fields.some((field) => body?.[field] !== undefined)) throw new ApiError('VALIDATION_ERROR', nothingToChange(fields));
}

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  code: string;
}

export function errorBody(statusCode: number, code: string, message: string): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, code };
}

/** The code used for a framework error that only carries an HTTP status. */
export function codeForStatus(statusCode: number): ErrorCode {
  switch (statusCode) {
    case 401:
      return 'INVALID_API_KEY';
    case 404:
      return 'NOT_FOUND';
    case 405:
      return 'METHOD_NOT_ALLOWED';
    case 408:
      return 'REQUEST_TIMEOUT';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
    case 414:
      return 'URI_TOO_LONG';
    case 415:
      return 'UNSUPPORTED_MEDIA_TYPE';
    case 429:
      return 'RATE_LIMIT_EXCEEDED';
    case 431:
      return 'HEADERS_TOO_LARGE';
    case 503:
      return 'SERVICE_UNAVAILABLE';
    default:
      return statusCode >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR';
  }
}

/**
 * 405 for a known path asked with a method it does not serve, with the `Allow` header: the
 * not-found handler's answer, and that of a fixed path that a parameter route of another method
 * also matches (`GET /v1/schedule/cron` reaches `GET /v1/schedule/:id`).
 */
export function methodNotAllowed(method: string, path: string, allowed: string[], headers: Record<string, string> = {}): ApiError {
  return new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; it answers ${allowed.join(', ')}`, { ...headers, allow: allowed.join(', ') });
}
