import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler, RouteOptions } from 'fastify';
import type { KeyOwner } from '../account/protocol-store.js';
import { bearerToken } from '../auth/authenticator.js';
import { sameSecret } from '../crypto/same-secret.js';
import type { Deps } from '../deps.js';
import type { RateLimitResult } from '../limits/rate-limiter.js';
import { tierOf } from '../tiers.js';
import { ApiError } from './errors.js';

/**
 * How a route is reached: `key` needs a protocol API key, `admin` the operator token, `public`
 * nothing, `link` nothing either: an email's engagement links (open pixel, click redirect,
 * unsubscribe), counted per client IP apart from the API (`HERALD_LINK_RATE_LIMIT`); `telegram`
 * the Bot API's secret-token header (the bot webhook), counted apart from keyless callers since
 * Telegram sends every user's updates from a few addresses. Routes say which in `config.access`;
 * without it, /v1 routes need a key.
 */
export type Access = 'key' | 'admin' | 'public' | 'link' | 'telegram';

/** Updates per second the Telegram webhook takes (Telegram retries what is refused). */
export const TELEGRAM_UPDATE_LIMIT = 1000;

declare module 'fastify' {
  interface FastifyRequest {
    auth: KeyOwner | null;
    /** performance.now() when the guard first saw the request: the request log's latency. */
    startedAt: number;
    /** The app's count of unanswered requests while this one counts in it. */
    inFlight: InFlight | null;
    /** An engagement link's GET over its client's link limit: answered, but not counted. */
    overLinkLimit: boolean;
  }
  interface FastifyInstance {
    /** Requests taken and not yet answered (installGuard). */
    inFlight: InFlight;
  }
  interface FastifyContextConfig {
    access?: Access;
  }
}

/**
 * Requests the app has taken and not yet answered. Closing the server waits for open connections,
 * not for handlers: a request whose client has gone away keeps running, and the database must not
 * close under it. The gateway waits for this count to reach zero before closing storage.
 */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];
  /** Set when the app starts closing (preClose): every answer from then on says `Connection: close`. */
  draining = false;

  get size(): number {
    return this.count;
  }

  enter(): void {
    this.count++;
  }

  leave(): void {
    if (--this.count === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves true once no request is in flight, or false after `timeoutMs` with some still running. */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== wake);
        resolve(false);
      }, timeoutMs);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(wake);
    });
  }
}

/** Takes a request out of its app's in-flight count, at its answer (the onSend hook). */
function requestFinished(request: FastifyRequest): void {
  const inFlight = request.inFlight;
  if (inFlight) {
    request.inFlight = null;
    inFlight.leave();
  }
}

/** The access a route declares, or its default. */
export function routeAccess(route: { url: string; config?: { access?: Access } }): Access {
  return route.config?.access ?? (route.url.startsWith('/v1/') ? 'key' : 'public');
}

export function setRateHeaders(reply: FastifyReply, result: RateLimitResult) {
  // Lower-case names: Fastify lower-cases every name it is given, so these skip a copy per header.
  reply.header('x-ratelimit-limit', result.limit);
  reply.header('x-ratelimit-remaining', result.remaining);
  reply.header('x-ratelimit-reset', result.reset);
}

/**
 * Counts a request against the limit of its client's IP: the limit of every answer given without
 * a valid key, by a route or outside one (http/framework-errors.ts).
 */
export function checkIpLimit(deps: Pick<Deps, 'limiter' | 'config'>, ip: string | undefined): Promise<RateLimitResult> {
  return deps.limiter.check(ipLimitKey(ip), deps.config.ipRateLimit);
}

const ipLimitKey = (ip: string | undefined) => `ip:${ip ?? 'unknown'}`;

/** The 429 of a request over its limit. */
export function rateLimitExceeded(result: RateLimitResult): ApiError {
  // The limiter's clock, not deps.now(): the window and the wait must be measured alike.
  return new ApiError('RATE_LIMIT_EXCEEDED', `Rate limit of ${result.limit} requests per second exceeded; retry after ${result.retryAfter}s`, {
    'Retry-After': String(result.retryAfter),
  });
}

/** A key owner's rate-limit key and tier maximum, worked out once per cached owner. */
const protocolLimits = new WeakMap<KeyOwner, { key: string; max: number }>();
function protocolLimit(owner: KeyOwner) {
  let limit = protocolLimits.get(owner);
  if (!limit) protocolLimits.set(owner, (limit = { key: `p:${owner.protocol.id}`, max: tierOf(owner.protocol.tier).requestsPerSecond }));
  return limit;
}

/**
 * The `WWW-Authenticate` header of a 401 (RFC 9110 §11.6.1) for a route that takes a bearer
 * token: the scheme and realm, and `error="invalid_token"` when a bearer token was sent but is not
 * accepted (RFC 6750 §3; a request without one is told only how to authenticate).
 */
function bearerChallenge(realm: string, authorization: string | undefined): Record<string, string> {
  const error = bearerToken(authorization) === null ? '' : ', error="invalid_token"';
  return { 'www-authenticate': `Bearer realm="${realm}"${error}` };
}

/**
 * Authentication, rate limiting and the request log, for every request. Requests with a valid key
 * count against their protocol's tier limit; all others against a per-client-IP limit.
 *
 * Each route gets the one onRequest hook of its access level when it is registered (and unknown
 * routes the public one), so a request runs a single hook that neither looks up its route's
 * options nor decides anything its route already decided.
 */
export function installGuard(app: FastifyInstance, deps: Deps, answeredStatus: (socket: Socket) => number | undefined): void {
  app.decorateRequest('auth', null);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('inFlight', null);
  app.decorateRequest('overLinkLimit', false);
  const inFlight = new InFlight();
  app.decorate('inFlight', inFlight);
  app.addHook('preClose', (done) => {
    inFlight.draining = true;
    done();
  });

  function enforce(reply: FastifyReply, result: RateLimitResult) {
    setRateHeaders(reply, result);
    if (!result.allowed) throw rateLimitExceeded(result);
  }

  async function limit(reply: FastifyReply, key: string, max: number) {
    enforce(reply, await deps.limiter.check(key, max));
  }

  const limitByIp = async (request: FastifyRequest, reply: FastifyReply) => enforce(reply, await checkIpLimit(deps, request.ip));

  /**
   * Engagement links come from mailbox providers' image proxies and one-click senders, many
   * readers behind one address, so they have a limit of their own, far above the API's per-IP
   * one. Over it, a GET is still answered (the image shown, the reader redirected) but not
   * counted as an open or a click; a POST (the one-click unsubscribe) is refused with a 429.
   */
  async function limitLink(request: FastifyRequest, reply: FastifyReply) {
    const result = await deps.limiter.check(`link:${request.ip ?? 'unknown'}`, deps.config.linkRateLimit);
    if (result.allowed || request.method === 'POST') return enforce(reply, result);
    setRateHeaders(reply, result);
    request.overLinkLimit = true;
  }

  async function authenticate(request: FastifyRequest, reply: FastifyReply) {
    const owner = await deps.authenticator.authenticate(request.headers.authorization).catch(async (error: unknown) => {
      // The key could not be checked (database down): the 503 still carries rate-limit headers.
      await limitByIp(request, reply).catch(() => {});
      throw error;
    });
    if (!owner) {
      await limitByIp(request, reply);
      const message = request.headers.authorization
        ? 'Invalid API key: it is malformed, unknown or revoked'
        : 'Missing API key: send Authorization: Bearer <key>';
      throw new ApiError('INVALID_API_KEY', message, bearerChallenge('herald', request.headers.authorization));
    }
    request.auth = owner;
    const { key, max } = protocolLimit(owner);
    return limit(reply, key, max);
  }

  /**
   * A call that proved a shared secret (the admin token, the Telegram webhook's) counts against
   * that secret's own limit. Calls without it count per client IP, like any call without valid
   * credentials, and an address over that limit is refused whatever it sends: a guess there gets
   * the same 429 right or wrong, so guessing the secret is as slow as guessing a key.
   */
  async function limitProven(request: FastifyRequest, reply: FastifyReply, key: string, max: number) {
    const byIp = await deps.limiter.peek(ipLimitKey(request.ip), deps.config.ipRateLimit);
    if (!byIp.allowed) return enforce(reply, byIp);
    return limit(reply, key, max);
  }

  /** The operator's calls: their own limit, as an identity import runs far above the per-IP one. */
  async function authorizeAdmin(request: FastifyRequest, reply: FastifyReply) {
    const token = bearerToken(request.headers.authorization);
    if (deps.config.adminToken && token && sameSecret(token, deps.config.adminToken)) return limitProven(request, reply, 'admin', deps.config.adminRateLimit);
    await limitByIp(request, reply);
    const challenge = bearerChallenge('herald-admin', request.headers.authorization);
    if (!deps.config.adminToken) throw new ApiError('INVALID_ADMIN_TOKEN', 'The admin API is disabled: set HERALD_ADMIN_TOKEN', challenge);
    throw new ApiError('INVALID_ADMIN_TOKEN', 'Invalid admin token', challenge);
  }

  /**
   * The bot webhook: Telegram proves itself with the secret token set with setWebhook. Anyone else
   * is refused (403) and counted per client IP like any call without credentials.
   */
  async function authorizeTelegram(request: FastifyRequest, reply: FastifyReply) {
    const given = request.headers['x-telegram-bot-api-secret-token'];
    const secret = deps.config.telegramWebhookSecret;
    if (secret && typeof given === 'string' && sameSecret(given, secret)) return limitProven(request, reply, 'telegram', TELEGRAM_UPDATE_LIMIT);
    await limitByIp(request, reply);
    throw new ApiError('FORBIDDEN', 'Missing or wrong X-Telegram-Bot-Api-Secret-Token');
  }

  /** What every hook does first: the request id on the answer (errors included) and the start time. */
  function begin(request: FastifyRequest, reply: FastifyReply) {
    reply.header('x-request-id', request.id);
    request.startedAt = performance.now();
    request.inFlight = inFlight;
    inFlight.enter();
  }

  const settle = (promise: Promise<unknown>, done: HookHandlerDoneFunction) => promise.then(() => done(), done);

  /**
   * Header lines the gateway must see exactly as sent, which Node's parser would otherwise settle
   * by itself: HTTP/1.1 requires one Host header with a valid value (RFC 9112 §3.2; Node refuses a
   * missing one with a bare 400 that has none of the headers and body every answer carries, so the
   * app takes that check over with `requireHostHeader: false`), and Node keeps the first of
   * repeated Host or Authorization lines, where a proxy in front may have read another. Refused
   * with a 400 in the one error shape, counted per client IP.
   */
  function refusedHeaders(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, credentials: boolean): boolean {
    const problem = headerProblem(request.raw, credentials);
    if (problem === null) return false;
    const refuse = async () => {
      await limitByIp(request, reply);
      throw new ApiError('VALIDATION_ERROR', problem);
    };
    settle(refuse(), done);
    return true;
  }

  const hooks: Record<Access, onRequestHookHandler> = {
    // Callback style: a known key under an in-process rate limiter (the common case) is settled
    // without a single promise; everything else takes the awaited path.
    key(request, reply, done) {
      begin(request, reply);
      if (refusedHeaders(request, reply, done, true)) return;
      const owner = deps.authenticator.peek(request.headers.authorization);
      if (owner) {
        const { key, max } = protocolLimit(owner);
        const result = deps.limiter.checkSync(key, max);
        if (result) {
          request.auth = owner;
          try {
            enforce(reply, result);
          } catch (error) {
            return done(error as Error);
          }
          return done();
        }
      }
      settle(authenticate(request, reply), done);
    },
    admin(request, reply, done) {
      begin(request, reply);
      if (refusedHeaders(request, reply, done, true)) return;
      settle(authorizeAdmin(request, reply), done);
    },
    public(request, reply, done) {
      begin(request, reply);
      if (refusedHeaders(request, reply, done, false)) return;
      settle(limitByIp(request, reply), done);
    },
    link(request, reply, done) {
      begin(request, reply);
      if (refusedHeaders(request, reply, done, false)) return;
      settle(limitLink(request, reply), done);
    },
    telegram(request, reply, done) {
      begin(request, reply);
      if (refusedHeaders(request, reply, done, false)) return;
      settle(authorizeTelegram(request, reply), done);
    },
  };

  /**
   * The guard of an API route with path parameters: a parameter left empty (`GET /v1/webhooks/`)
   * names nothing, so the path is unknown and answered as the not-found handler answers one
   * (per client IP, outside any protocol's log, the body unread), whatever the key.
   */
  const unknownWhenEmpty = (guard: onRequestHookHandler): onRequestHookHandler =>
    function (request, reply, done) {
      if (!hasEmptyParam(request.params)) return guard.call(this, request, reply, done);
      hooks.public.call(this, request, reply, (error) => done(error ?? unknownRoute(request.method, request.url)));
    };
  const checkedHooks: Record<Access, onRequestHookHandler> = {
    key: unknownWhenEmpty(hooks.key),
    admin: unknownWhenEmpty(hooks.admin),
    public: unknownWhenEmpty(hooks.public),
    link: unknownWhenEmpty(hooks.link),
    telegram: unknownWhenEmpty(hooks.telegram),
  };
  const guardHooks = new Set([...Object.values(hooks), ...Object.values(checkedHooks)]);

  app.addHook('onRoute', (route: RouteOptions) => {
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    // A GET route's HEAD twin is registered with the GET route's hooks: it has its guard already.
    if (own.some((hook) => guardHooks.has(hook as onRequestHookHandler))) return;
    // Engagement links (/track/…, /unsubscribe/…) answer an empty token as any unknown token.
    const guards = route.url.startsWith('/v1/') && route.url.includes('/:') ? checkedHooks : hooks;
    route.onRequest = [guards[routeAccess(route)], ...own];
  });

  /** The not-found handler's hooks: unknown routes are public. */
  notFoundHooks.set(app, hooks.public);

  // Callback style: recording is synchronous (a buffer push), so no promise per request. onSend
  // rather than onResponse: an onResponse hook makes Fastify listen for every response's end.
  app.addHook('onSend', (request, reply, payload, done) => {
    // A request that arrived before the close (its body still coming, say) is answered in full,
    // and its connection is not kept for another.
    if (inFlight.draining) reply.header('connection', 'close');
    requestFinished(request);
    const auth = request.auth;
    if (auth) {
      const url = request.url;
      const query = url.indexOf('?');
      deps.requestLog.record(
        auth.protocol.id,
        request.method,
        query === -1 ? url : url.slice(0, query),
        // The route failing on a body cut off by the request timeout: the client was told 408.
        reply.statusCode >= 400 && answeredStatus(request.raw.socket) === 408 ? 408 : reply.statusCode,
        Math.round(performance.now() - request.startedAt),
        deps.now().getTime(),
      );
    }
    done(null, payload);
  });
}

/** A Host value: a registered name, IPv4 address or bracketed IPv6 literal, and an optional port (RFC 3986 §3.2). */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::\d*)?$/;

/** What is wrong with a request's Host line (and, with `credentials`, its Authorization lines), or null. */
export function headerProblem(raw: IncomingMessage, credentials: boolean): string | null {
  const host = raw.headers.host;
  if (host === undefined) {
    if (raw.httpVersion === '1.1') return 'An HTTP/1.1 request must carry a Host header';
  } else if (!HOST.test(host)) {
    return 'The Host header must name a host, and optionally its port';
  }
  let hosts = 0;
  let authorizations = 0;
  const lines = raw.rawHeaders;
  for (let i = 0; i < lines.length; i += 2) {
    const name = lines[i];
    if (name.length === 4 && name.toLowerCase() === 'host') hosts++;
    else if (credentials && name.length === 13 && name.toLowerCase() === 'authorization') authorizations++;
  }
  if (hosts > 1) return 'A request must carry one Host header, not several';
  if (authorizations > 1) return 'A request must carry one Authorization header, not several';
  return null;
}

const notFoundHooks = new WeakMap<FastifyInstance, onRequestHookHandler>();

/** Whether a route's path parameters leave one empty. */
export function hasEmptyParam(params: unknown): boolean {
  if (!params || typeof params !== 'object') return false;
  for (const value of Object.values(params)) if (value === '') return true;
  return false;
}

/** The longest path an answer repeats: a 5 KB path is not echoed whole. */
const ECHOED_PATH_LENGTH = 256;

/** The 404 of a path no route serves, as the not-found handler words it. */
export function unknownRoute(method: string, url: string): ApiError {
  const path = url.split('?')[0];
  const shown = path.length > ECHOED_PATH_LENGTH ? `${path.slice(0, ECHOED_PATH_LENGTH)}…` : path;
  return new ApiError('NOT_FOUND', `Route ${method} ${shown} not found`);
}

/** The onRequest hook for requests no route matches (installGuard must have run on `app`). */
export function notFoundGuard(app: FastifyInstance): onRequestHookHandler {
  const hook = notFoundHooks.get(app);
  if (!hook) throw new Error('installGuard must run before the not-found handler is set');
  return hook;
}
