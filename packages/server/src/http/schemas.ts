import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';

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
