import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KeyOwner } from '../account/protocol-store.js';
import { bearerToken } from '../auth/authenticator.js';
import type { Deps } from '../deps.js';
import type { RateLimitResult } from '../limits/rate-limiter.js';
import { tierOf } from '../tiers.js';
import { ApiError } from './errors.js';

/**
 * How a route is reached: `key` needs a protocol API key, `admin` the operator token, `public`
 * nothing. Routes say which in `config.access`; without it, /v1 routes need a key.
 */
export type Access = 'key' | 'admin' | 'public';

declare module 'fastify' {
  interface FastifyRequest {
    auth: KeyOwner | null;
  }
  interface FastifyContextConfig {
    access?: Access;
  }
}

function accessOf(request: FastifyRequest): Access {
  if (request.is404) return 'public';
  const declared = request.routeOptions.config?.access;
  if (declared) return declared;
  return request.url.startsWith('/v1/') ? 'key' : 'public';
}

function setRateHeaders(reply: FastifyReply, result: RateLimitResult) {
  reply.header('X-RateLimit-Limit', result.limit);
  reply.header('X-RateLimit-Remaining', result.remaining);
  reply.header('X-RateLimit-Reset', result.reset);
}

function sameSecret(given: string, expected: string): boolean {
  // Hashing first gives equal lengths, so the comparison leaks neither content nor length.
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Authentication, rate limiting and the request log, for every request. Requests with a valid key
 * count against their protocol's tier limit; all others against a per-client-IP limit.
 */
export function installGuard(app: FastifyInstance, deps: Deps): void {
  app.decorateRequest('auth', null);

  function enforce(reply: FastifyReply, result: RateLimitResult, max: number) {
    setRateHeaders(reply, result);
    if (!result.allowed) {
      // The limiter's clock, not deps.now(): the window and the wait must be measured alike.
      const retryAfter = result.retryAfter;
      throw new ApiError('RATE_LIMIT_EXCEEDED', `Rate limit of ${max} requests per second exceeded; retry after ${retryAfter}s`, {
        'Retry-After': String(retryAfter),
      });
    }
  }

  async function limit(reply: FastifyReply, key: string, max: number) {
    enforce(reply, await deps.limiter.check(key, max), max);
  }

  const limitByIp = (request: FastifyRequest, reply: FastifyReply) => limit(reply, `ip:${request.ip}`, deps.config.ipRateLimit);
  /** A protocol's rate-limit key and its tier's requests per second. */
  const protocolLimit = (owner: KeyOwner) => ({ key: `p:${owner.protocol.id}`, max: tierOf(owner.protocol.tier).requestsPerSecond });

  async function guard(request: FastifyRequest, reply: FastifyReply, access: Access) {
    if (access === 'key') {
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
        throw new ApiError('INVALID_API_KEY', message);
      }
      request.auth = owner;
      const { key, max } = protocolLimit(owner);
      return limit(reply, key, max);
    }
    await limitByIp(request, reply);
    if (access === 'admin') {
      const token = bearerToken(request.headers.authorization);
      if (!deps.config.adminToken) throw new ApiError('INVALID_ADMIN_TOKEN', 'The admin API is disabled: set HERALD_ADMIN_TOKEN');
      if (!token || !sameSecret(token, deps.config.adminToken)) throw new ApiError('INVALID_ADMIN_TOKEN', 'Invalid admin token');
    }
  }

  // Callback style: a known key under an in-process rate limiter (the common case) is settled
  // without a single promise; everything else takes the awaited path.
  app.addHook('onRequest', (request, reply, done) => {
    const access = accessOf(request);
    if (access === 'key') {
      const owner = deps.authenticator.peek(request.headers.authorization);
      if (owner) {
        const { key, max } = protocolLimit(owner);
        const result = deps.limiter.checkSync(key, max);
        if (result) {
          request.auth = owner;
          try {
            enforce(reply, result, max);
          } catch (error) {
            return done(error as Error);
          }
          return done();
        }
      }
    }
    guard(request, reply, access).then(() => done(), done);
  });

  // Callback style: recording is synchronous (a buffer push), so no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    if (!request.auth) return done();
    const url = request.url;
    const query = url.indexOf('?');
    deps.requestLog.record({
      protocolId: request.auth.protocol.id,
      method: request.method,
      endpoint: query === -1 ? url : url.slice(0, query),
      statusCode: reply.statusCode,
      latencyMs: Math.round(reply.elapsedTime),
      at: deps.now().getTime(),
    });
    done();
  });
}
