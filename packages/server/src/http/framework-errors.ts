import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './errors.js';

/**
 * Fastify's `frameworkErrors`: URLs its router cannot take (bad percent-encoding, a path parameter
 * over `maxParamLength`), answered in the one error shape instead of Fastify's own body.
 */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.code(414).send(errorBody(414, 'URI_TOO_LONG', 'A path parameter of the URL is too long'));
  } else if (error.code === 'FST_ERR_BAD_URL') {
    reply.code(400).send(errorBody(400, 'VALIDATION_ERROR', 'The URL is not validly percent-encoded'));
  } else {
    reply.code(500).send(errorBody(500, 'INTERNAL_ERROR', 'Internal server error'));
  }
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses (malformed request line or
 * headers, a body longer than its Content-Length, headers over the size limit) and requests not
 * received within the timeouts. Answered in the one error shape, then the connection is closed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ([408, 'REQUEST_TIMEOUT', 'The request was not received in time'] as const)
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? ([431, 'HEADERS_TOO_LARGE', 'Request headers are too large'] as const)
        : ([400, 'VALIDATION_ERROR', 'Malformed HTTP request'] as const);
  const body = JSON.stringify(errorBody(status, code, message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
