import { shapeProblem, type AnswerShape } from './answer-shape.js';
import { HeraldApiError, HeraldError, HeraldNetworkError, toNetworkError } from './errors.js';
import { isRetryable, parseRetryAfter, retryDelay, type AttemptOutcome } from './retry.js';
import { SDK_VERSION } from './version.js';

/** The subset of `fetch` the SDK uses; pass your own to add tracing, proxies or test doubles. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export const DEFAULT_BASE_URL = 'http://localhost:3000';
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 2;
const MAX_TIMER_MS = 2_147_483_647;

/** Settings shared by every call of one client. */
export interface CoreOptions {
  /** Gateway address, with or without a trailing slash; may include a path prefix. */
  baseUrl?: string | undefined;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string | undefined;
  /** Per-attempt limit, covering the answer's body too. */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt (0 disables retrying). */
  maxRetries?: number | undefined;
  fetch?: FetchLike | undefined;
  /** Replaces the default `herald-sdk-js/<version>` User-Agent. */
  userAgent?: string | undefined;
  /** Waits between retries; injectable so tests need not sleep. */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /** Source of jitter in [0, 1). */
  random?: (() => number) | undefined;
  /** The clock, in milliseconds since the epoch, for deadlines such as waitForDelivery's. */
  now?: (() => number) | undefined;
}

/** Per-call overrides; every resource method accepts these as its last argument. */
export interface RequestOptions {
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  /** Cancels the call, including any wait between retries; the signal's reason is thrown. */
  signal?: AbortSignal | undefined;
}

export type QueryValue = string | number | boolean | undefined;

export interface ApiCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /**
   * Repeating the call is harmless (its body carries idempotency keys the gateway deduplicates on),
   * so it may be retried like a GET. The only thing that makes a POST or PATCH repeatable.
   */
  retrySafe?: boolean;
  /**
   * A repeat does the work anew, or cannot succeed, although the method says repeatable (a
   * template update adds a version; an identity's erasure uses up its signed challenge): after a
   * 5xx, a timeout or a reset it is not retried, as a POST without keys is not.
   */
  repeatsWork?: true;
  /**
   * The gateway answers 204 with no body (the deletions of templates and webhook endpoints). Any
   * other call's 2xx carries JSON, and a 204 to it came from something that is not the gateway.
   */
  noContent?: true;
  /** The least its 2xx JSON must be (every call resolving with JSON names it); anything else came from something that is not the gateway. */
  answer?: AnswerShape;
  /** A public route: no Authorization header, so the API key is not sent where it is not needed. */
  anonymous?: boolean;
  /** Headers of this call, such as `idempotency-key`. */
  headers?: Record<string, string>;
  /**
   * Told of every attempt that failed, before it is retried or thrown: a signal that ends the call
   * while it waits to retry throws its own reason, and this is how the caller still knows what the
   * last attempt got (waitForDelivery, whether its deadline cut short a read refused by the rate limit).
   */
  onFailedAttempt?: (error: HeraldError) => void;
}

/** The options of the calls that create something (a broadcast, a schedule, a template or one of its versions): the common ones and the idempotency key. */
export interface CreateOptions extends RequestOptions {
  /**
   * Sent as the `Idempotency-Key` header (1–255 printable ASCII characters). It makes the call safe to retry: the
   * gateway answers a repeat with the first answer and creates nothing more, so with a key the SDK
   * retries the call like a GET on 5xx answers and network failures.
   */
  idempotencyKey?: string;
}

/** What an Idempotency-Key header can hold: 1–255 printable ASCII characters, no space at either end. */
export const IDEMPOTENCY_KEY_HEADER = /^[!-~](?:[ -~]{0,253}[!-~])?$/;

/**
 * A creation call with `options.idempotencyKey` as its header; retry-safe with one. Without one a
 * PUT (a template update, which stores a new version each time it arrives) is retried only as a
 * POST is. A key that cannot be a header value throws a TypeError at once: fetch would refuse to
 * send it, which would otherwise look like a network failure and be retried.
 */
export function createCall(
  path: string,
  body: unknown,
  answer: AnswerShape,
  options: CreateOptions = {},
  method: 'POST' | 'PUT' = 'POST',
): { call: ApiCall; options: RequestOptions } {
  const { idempotencyKey, ...requestOptions } = options;
  const call: ApiCall = { method, path, body, answer, ...(method === 'PUT' ? { repeatsWork: true } : {}) };
  if (idempotencyKey === undefined) return { call, options: requestOptions };
  if (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY_HEADER.test(idempotencyKey)) {
    throw new TypeError(`idempotencyKey must be 1 to 255 printable ASCII characters without a space at either end, got ${JSON.stringify(idempotencyKey)}`);
  }
  return { call: { ...call, headers: { 'idempotency-key': idempotencyKey }, retrySafe: true }, options: requestOptions };
}

type Answer = { ok: true; value: unknown } | { ok: false; error: HeraldApiError; retryAfterMs: number | undefined };

/** The rate limit an answer reported (`X-RateLimit-Limit`, `-Remaining`, `-Reset` in Unix seconds). */
export interface RateLimitInfo {
  limit: number;
  remaining: number;
  reset: number;
}

/** What the gateway's answer said beside its body. */
export interface ResponseInfo {
  statusCode: number;
  headers: Headers;
  /** `X-Request-Id`: name it when asking about a call. */
  requestId: string | undefined;
  /** Undefined when the three headers were not all there as whole numbers. */
  rateLimit: RateLimitInfo | undefined;
  /**
   * The attempts the call took, this answer's included: more than 1 after retries. A send with an
   * idempotency key that answers `duplicate` after a retry found its own first attempt stored.
   */
  attempts: number;
}

const answers = new WeakMap<object, ResponseInfo>();

/**
 * The answer a call's result came in (status, headers, request id, rate limit), as Stripe's
 * `lastResponse`: for any object or array a call resolved with; undefined for anything else (a
 * call answered 204 has no result, and a listAll iterator yields items of pages, not pages).
 * @example const sent = await herald.notifications.send(params);
 * const remaining = responseOf(sent)?.rateLimit?.remaining;
 */
export function responseOf(result: unknown): ResponseInfo | undefined {
  return typeof result === 'object' && result !== null ? answers.get(result) : undefined;
}

function responseInfo(response: Response): ResponseInfo {
  const whole = (name: string) => {
    const value = response.headers.get(name);
    return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
  };
  const [limit, remaining, reset] = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map(whole);
  return {
    statusCode: response.status,
    headers: response.headers,
    requestId: response.headers.get('x-request-id') ?? undefined,
    rateLimit: limit !== undefined && remaining !== undefined && reset !== undefined ? { limit, remaining, reset } : undefined,
    attempts: 1,
  };
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Why a 2xx answer cannot be the gateway's, in a few words; undefined when it can be. */
function notTheGateways(response: Response, text: string, value: unknown, answer: AnswerShape | undefined): string | undefined {
  if (value === undefined) return text ? `a body that is not JSON (${response.headers.get('content-type') ?? 'no content type'})` : 'an empty body';
  const problem = answer && shapeProblem(value, answer);
  return problem ? `JSON that is not the gateway's answer (${problem})` : undefined;
}

function apiErrorFrom(response: Response, text: string, retryAfterMs: number | undefined): HeraldApiError {
  const body = parseJson(text) as Record<string, unknown> | undefined;
  const field = (name: string) => (body && typeof body[name] === 'string' ? (body[name] as string) : undefined);
  return new HeraldApiError({
    statusCode: response.status,
    code: field('code') ?? `HTTP_${response.status}`,
    message: field('message') ?? (text.trim().slice(0, 200) || `HTTP ${response.status}`),
    error: field('error') ?? response.statusText,
    requestId: response.headers.get('x-request-id') ?? undefined,
    retryAfterSeconds: retryAfterMs === undefined ? undefined : retryAfterMs / 1000,
  });
}

/** RangeError for a timeout or a retry count no call could work with (a string, NaN, Infinity, 0 ms, -1, 1.5). */
function checkTimeoutAndRetries(timeoutMs: unknown, maxRetries: unknown): void {
  if (!(typeof timeoutMs === 'number' && timeoutMs >= 1 && timeoutMs <= MAX_TIMER_MS)) {
    throw new RangeError(`timeoutMs must be 1 to ${MAX_TIMER_MS} milliseconds, got ${String(timeoutMs)}`);
  }
  if (!(Number.isInteger(maxRetries) && (maxRetries as number) >= 0 && (maxRetries as number) <= MAX_RETRIES)) {
    throw new RangeError(`maxRetries must be a whole number from 0 to ${MAX_RETRIES}, got ${String(maxRetries)}`);
  }
}

/**
 * The API key (or admin token) and User-Agent go in headers. fetch trims spaces and line breaks
 * at their ends (a key read from a file) and sends Latin-1 as it is, but refuses a line break or
 * NUL inside, or a character past U+00FF: such a value throws a TypeError at once rather than
 * fail every request as a network error, retries and all.
 */
const HEADER_VALUE = /^[^\0\r\n\u0100-\uffff]*$/;
function checkHeaderValue(name: string, value: string): void {
  if (!HEADER_VALUE.test(value.trim())) throw new TypeError(`${name} cannot be sent in a header: it holds a line break, NUL or a character past U+00FF`);
}

/** More retries than any backoff makes sense of (the CLI allows 10). */
const MAX_RETRIES = 100;

/** `baseUrl` when it is an http(s) URL; a TypeError otherwise. */
function checkedBaseUrl(baseUrl: string): string {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    // reported below
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw new TypeError(`baseUrl must be an http:// or https:// URL, got "${baseUrl}"`);
  // Paths are appended to it: a query or fragment would swallow them, even an empty one (a bare
  // `?` or `#`, which the parsed URL does not show).
  if (/[?#]/.test(baseUrl)) throw new TypeError(`baseUrl must not have a query or fragment, got "${baseUrl}"`);
  return baseUrl;
}

/**
 * The one request core under every resource: base URL, bearer auth, JSON in and out, a timeout
 * per attempt, retries with backoff, and typed errors (HeraldApiError for error answers,
 * HeraldNetworkError when no answer came).
 */
export class RequestCore {
  readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly fetch: FetchLike;
  private readonly userAgent: string;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  /** The injected clock (Date.now by default). */
  readonly now: () => number;

  /** Throws TypeError or RangeError for an option no call could work with, at construction rather than at the first call. */
  constructor(options: CoreOptions = {}) {
    // An empty string (an environment variable set to nothing) means the default, as undefined does.
    this.baseUrl = checkedBaseUrl(options.baseUrl || DEFAULT_BASE_URL).replace(/\/+$/, '');
    // null from JavaScript callers means no key, as undefined does; a key read from a file may end with a line break.
    this.token = options.token == null ? undefined : String(options.token).trim();
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    // Node's timers hold at most 2^31 - 1 ms (about 24.8 days); a longer one fires at once.
    checkTimeoutAndRetries(this.timeoutMs, this.maxRetries);
    this.fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.userAgent = options.userAgent ?? `herald-sdk-js/${SDK_VERSION}`;
    if (this.token !== undefined) checkHeaderValue('the API key (or admin token)', this.token);
    checkHeaderValue('userAgent', String(this.userAgent));
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  /** Waits `ms` with the injected sleep; an aborted signal rejects with its reason. */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    return this.sleep(ms, signal);
  }

  /** Sends one API call, retrying as the retry policy allows; resolves with the parsed JSON body. */
  async request<T>(call: ApiCall, options: RequestOptions = {}): Promise<T> {
    const maxRetries = options.maxRetries ?? this.maxRetries;
    // A call's own options are held to the client's rules (Infinity or 0 would time out at once);
    // the client's were checked when it was made.
    if (options.timeoutMs !== undefined || options.maxRetries !== undefined) checkTimeoutAndRetries(options.timeoutMs ?? this.timeoutMs, maxRetries);
    const url = this.urlFor(call);
    const init: RequestInit = {
      method: call.method,
      headers: this.headersFor(call),
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
    };
    for (let retry = 0; ; retry++) {
      let error: HeraldError;
      let outcome: AttemptOutcome;
      let retryAfterMs: number | undefined;
      try {
        const answer = await this.attempt(url, init, options, call);
        if (answer.ok) {
          const info = responseOf(answer.value);
          if (info) info.attempts = retry + 1;
          return answer.value as T;
        }
        ({ error, retryAfterMs } = answer);
        outcome = { status: answer.error.statusCode };
      } catch (thrown) {
        if (!(thrown instanceof HeraldNetworkError)) throw thrown;
        error = thrown;
        outcome = { network: thrown.kind };
      }
      call.onFailedAttempt?.(error);
      if (retry >= maxRetries || !isRetryable(outcome, call.repeatsWork ? 'POST' : call.method, Boolean(call.retrySafe))) throw error;
      const delay = retryDelay(retry, retryAfterMs, this.random);
      if (delay === undefined) throw error;
      await this.sleep(delay, options.signal);
    }
  }

  private urlFor(call: ApiCall): string {
    // A URL parser resolves `.` and `..` segments (encoded or not): `get('..')` would reach another route.
    const dotSegment = call.path.split('/').find((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
    if (dotSegment !== undefined) throw new TypeError(`"${decodeURIComponent(dotSegment)}" is not an id`);
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) params.set(name, String(value));
    }
    const search = params.toString();
    return `${this.baseUrl}${call.path}${search ? `?${search}` : ''}`;
  }

  private headersFor(call: ApiCall): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.userAgent };
    if (this.token && !call.anonymous) headers.authorization = `Bearer ${this.token}`;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    return { ...headers, ...call.headers };
  }

  private async attempt(url: string, init: RequestInit, options: RequestOptions, call: ApiCall): Promise<Answer> {
    const target = `${init.method} ${url.split('?')[0]}`;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const signal = options.signal;
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let response: Response;
    let text: string;
    try {
      if (signal?.aborted) throw signal.reason;
      response = await this.fetch(url, { ...init, signal: controller.signal });
      text = await response.text();
    } catch (thrown) {
      if (signal?.aborted) throw signal.reason;
      if (timedOut) throw new HeraldNetworkError('timeout', `Request to ${target} timed out after ${timeoutMs} ms`, { cause: thrown });
      throw toNetworkError(thrown, target);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    if (response.ok) {
      if (response.status === 204 && call.noContent) return { ok: true, value: undefined };
      // Every other answer of the gateway is JSON of the call's shape: anything else came from
      // something that is not it.
      const value = parseJson(text);
      const problem = notTheGateways(response, text, value, call.answer);
      if (problem) throw new HeraldNetworkError('invalid_response', `${target} answered ${response.status} with ${problem}: is ${this.baseUrl} a Herald gateway?`);
      if (typeof value === 'object' && value !== null) answers.set(value, responseInfo(response));
      return { ok: true, value };
    }
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), Date.now());
    return { ok: false, error: apiErrorFrom(response, text, retryAfterMs), retryAfterMs };
  }
}
