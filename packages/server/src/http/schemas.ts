import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { VISIBLE_CHARACTER } from '../rendering/clean-text.js';

export const ErrorSchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    code: Type.String(),
  },
  { $id: 'Error', description: 'Every error answer has this shape' },
);

export const IsoDateTime = Type.String({ format: 'date-time' });

/**
 * A name people read (a protocol's, shown to recipients; a template's, in lists): 1–200 characters,
 * something visible (not only spaces or zero-width characters), and no control or bidi marks, where
 * a right-to-left override would disguise what follows.
 */
export const DisplayName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: `^(?=.*${VISIBLE_CHARACTER})[^\\p{Cc}\\u2028\\u2029\\u202A-\\u202E\\u2066-\\u2069]+$`,
  description: 'A name that is not blank and holds no control or direction characters (line breaks included)',
});

/** `page` (from 1) and `limit` (1..max) query parameters with the given default limit. */
export function pageQuery(defaultLimit: number, maxLimit = 100) {
  return {
    // Bounded so the offset stays a whole number PostgreSQL reads as bigint (page 1e20 did not).
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
    limit: Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit }),
  };
}

/** The error answers a route can give, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref(ErrorSchema)]));
}

/** A string limited to `values`, as a JSON Schema enum (so errors list the allowed values). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
