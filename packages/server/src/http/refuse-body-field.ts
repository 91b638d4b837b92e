import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

/**
 * Unknown fields are ignored, but where ignoring one would do harm (a key the route does not
 * read, a recipient in a call that messages everyone, the other schedule kind's field) it is
 * refused, naming why: throws 400 when the body holds `field`.
 */
export function refuseBodyField(body: unknown, field: string, why: string): void {
  if (Object.hasOwn(Object(body), field)) throw new ApiError('VALIDATION_ERROR', `${field}: ${why}`);
}

/** refuseBodyField as a preValidation hook: before the body's own checks. */
export const bodyFieldRefused = (field: string, why: string) => async (request: FastifyRequest) => refuseBodyField(request.body, field, why);
