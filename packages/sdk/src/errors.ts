import type { Notification } from './resources/notifications.js';

/** Base class of every error the SDK throws, so callers can catch them all at once. */
export class HeraldError extends Error {
  override name = 'HeraldError';
}

/**
 * The gateway answered with an error status. Every Herald error body is
 * `{statusCode, error, message, code}`; `code` is the stable value to branch on
 * (`INVALID_API_KEY`, `RATE_LIMIT_EXCEEDED`, `VALIDATION_ERROR`, …).
 */
export class HeraldApiError extends HeraldError {
  override name = 'HeraldApiError';
  /** HTTP status of the answer. */
  readonly statusCode: number;
  /** Machine-readable error code from the body (`HTTP_<status>` when the body had none). */
  readonly code: string;
  /** HTTP reason phrase, e.g. `Unauthorized`. */
  readonly error: string;
  /** The gateway's `X-Request-Id`, worth quoting in a support request. */
  readonly requestId: string | undefined;
  /** Seconds the gateway asked the client to wait (`Retry-After`), when it said so. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: { statusCode: number; code: string; message: string; error?: string; requestId?: string; retryAfterSeconds?: number }) {
    super(init.message);
    this.statusCode = init.statusCode;
    this.code = init.code;
    this.error = init.error ?? '';
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** Why a request got no HTTP answer at all. */
/**
 * `invalid_response`: an answer came, but not the gateway's (a 2xx that is not JSON, such as an
 * HTML page from whatever `baseUrl` points at, or JSON without what the call's answer holds, such
 * as `{}`); whether a send it answered was stored is unknown.
 */
export type NetworkErrorKind = 'timeout' | 'connection_refused' | 'dns' | 'connection_reset' | 'network' | 'invalid_response';

/** No answer from the gateway: the connection was refused, the host did not resolve, the request timed out, or what answered was not the gateway (`invalid_response`). */
export class HeraldNetworkError extends HeraldError {
  override name = 'HeraldNetworkError';

  constructor(
    readonly kind: NetworkErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * `waitForDelivery` gave up: the notification had not reached a final status (delivered, bounced,
 * failed, opted_out) within `timeoutMs`. It may still get there; poll `notifications.get` later.
 * When the wait ran out because its last read was refused by the rate limit, `cause` is that
 * refusal (a `HeraldApiError` with status 429).
 */
export class HeraldWaitTimeoutError extends HeraldError {
  override name = 'HeraldWaitTimeoutError';
  /** The status last seen, e.g. `queued` or `sending`; undefined when no read answered in time. */
  readonly lastStatus: string | undefined;

  constructor(
    readonly notificationId: string,
    readonly timeoutMs: number,
    /** The record as last read; undefined when no read answered in time (rate-limited, or slow). */
    readonly notification: Notification | undefined,
    options?: { cause?: HeraldApiError },
  ) {
    super(
      notification
        ? `Notification ${notificationId} was still ${notification.status} after ${timeoutMs} ms`
        : `Notification ${notificationId} could not be read within ${timeoutMs} ms`,
      options,
    );
    this.lastStatus = notification?.status;
  }
}

const CODE_KINDS: Record<string, Exclude<NetworkErrorKind, 'invalid_response'>> = {
  ECONNREFUSED: 'connection_refused',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_NONAME: 'dns',
  ECONNRESET: 'connection_reset',
  EPIPE: 'connection_reset',
  UND_ERR_SOCKET: 'connection_reset',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
};

function systemCode(error: unknown): string | undefined {
  // fetch wraps the socket error in `cause`; dual-stack connects wrap several in an AggregateError.
  for (let current: any = error, depth = 0; current && depth < 4; current = current.cause, depth++) {
    if (typeof current.code === 'string' && CODE_KINDS[current.code]) return current.code;
    const inner = Array.isArray(current.errors) ? current.errors.find((e: any) => typeof e?.code === 'string') : undefined;
    if (inner) return inner.code;
  }
  return undefined;
}

/** Turns whatever `fetch` threw into a HeraldNetworkError naming the cause. */
export function toNetworkError(error: unknown, target: string): HeraldNetworkError {
  const code = systemCode(error);
  const kind = (code ? CODE_KINDS[code] : undefined) ?? 'network';
  const reason = code ?? (error instanceof Error ? error.message : String(error));
  const messages: Record<Exclude<NetworkErrorKind, 'invalid_response'>, string> = {
    connection_refused: `Connection refused by ${target}`,
    dns: `Could not resolve the host of ${target}`,
    connection_reset: `Connection to ${target} was reset`,
    timeout: `Request to ${target} timed out`,
    network: `Network error reaching ${target}`,
  };
  return new HeraldNetworkError(kind, `${messages[kind]} (${reason})`, { cause: error });
}
