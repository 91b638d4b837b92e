import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { sendPixel } from '../engagement/routes.js';
import type { RateLimitResult } from '../limits/rate-limiter.js';
import { PARAM_TOO_LONG } from './error-handler.js';
import { errorBody } from './errors.js';
import { checkIpLimit, rateLimitExceeded, setRateHeaders } from './guard.js';

type ErrorAnswer = readonly [status: number, code: string, message: string];

/** The open pixel's route, `/track/open/:token`, however its token is written. */
const OPEN_PIXEL_PATH = /^\/track\/open\/[^/?#]*(?:[?#]|$)/;

/**
 * Answers for requests that never reach a route, and so never pass the guard (http/guard.ts):
 * URLs the router refuses and requests Node's HTTP parser refuses. They get what every other
 * answer gets: the one error shape, an `X-Request-Id`, and the headers of the per-client-IP rate
 * limit they count against.
 */
export function unroutedAnswers(deps: Pick<Deps, 'limiter' | 'config'>, nextRequestId: (given: unknown) => string) {
  /** Connections answered by clientErrorHandler, with the status they were given. */
  const answered = new WeakMap<Socket, number>();

  /**
   * Fastify's `frameworkErrors`: URLs its router cannot take (bad percent-encoding, a path
   * parameter over `maxParamLength`). Over the IP's limit, the answer is the 429 any public route
   * would give.
   */
  function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
    reply.header('x-request-id', request.id);
    // An open-pixel link, however broken, is answered with the image (engagement/routes.ts).
    const pixel =
      (request.method === 'GET' || request.method === 'HEAD') &&
      OPEN_PIXEL_PATH.test(request.url) &&
      (error.code === 'FST_ERR_MAX_PARAM_LENGTH' || error.code === 'FST_ERR_BAD_URL');
    const [status, code, message]: ErrorAnswer =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? [414, 'URI_TOO_LONG', PARAM_TOO_LONG]
        : error.code === 'FST_ERR_BAD_URL'
          ? [400, 'VALIDATION_ERROR', 'The URL is not validly percent-encoded']
          : [500, 'INTERNAL_ERROR', 'Internal server error'];
    checkIpLimit(deps, request.ip).then(
      (result) => {
        setRateHeaders(reply, result);
        if (result.allowed) return pixel ? sendPixel(reply) : reply.code(status).send(errorBody(status, code, message));
        const refused = rateLimitExceeded(result);
        reply.code(refused.statusCode).headers(refused.headers).send(errorBody(refused.statusCode, refused.code, refused.message));
      },
      // The shared counter is out of reach: the answer goes out without the limit's headers.
      () => (pixel ? sendPixel(reply) : reply.code(status).send(errorBody(status, code, message))),
    );
  }

  /**
   * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses (malformed request line or
   * headers, a body longer than its Content-Length, headers over the size limit) and requests not
   * received within the timeouts. Answered in the one error shape, then the connection is closed.
   */
  function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
    // A reset connection has nobody left to answer; one being answered is not answered again (the
    // parser reports an error for every chunk that arrives while the limiter is asked).
    if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    const [status, code, message]: ErrorAnswer =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'The request was not received in time']
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'HEADERS_TOO_LARGE', 'Request headers are too large']
          : [400, 'VALIDATION_ERROR', 'Malformed HTTP request'];
    answered.set(socket, status);
    const answer = (limit: RateLimitResult | undefined) => {
      const body = JSON.stringify(errorBody(status, code, message));
      const rateHeaders = limit
        ? `X-RateLimit-Limit: ${limit.limit}\r\nX-RateLimit-Remaining: ${limit.remaining}\r\nX-RateLimit-Reset: ${limit.reset}\r\n`
        : '';
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
            `X-Request-Id: ${nextRequestId(undefined)}\r\n${rateHeaders}Connection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy(error);
    };
    checkIpLimit(deps, socket.remoteAddress).then(answer, () => answer(undefined));
  }

  /**
   * The status a connection was answered with here, if it was. A request whose body was still
   * arriving when its time ran out is answered 408 here; its route then fails on the cut body, and
   * the request log must record what the client was told.
   */
  const answeredStatus = (socket: Socket | null | undefined): number | undefined => (socket ? answered.get(socket) : undefined);

  return { frameworkErrors, clientErrorHandler, answeredStatus };
}
