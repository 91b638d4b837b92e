const QUOTED = /["\\]/;
const QUOTE_OR_BACKSLASH = /["\\]/g;
/** What makes an array element need quotes: braces, the delimiter, quotes, backslashes, white space. */
const NEEDS_QUOTES = /[{}",\\\s]/;

/** A value as a quoted element of an array literal, escaping only the rare value that needs it. */
export function quotedElement(value: string): string {
  return `"${QUOTED.test(value) ? value.replace(QUOTE_OR_BACKSLASH, '\\$&') : value}"`;
}

/**
 * A value as an element of an array literal, bare when PostgreSQL reads it back unchanged without
 * quotes (not empty, not `NULL`, nothing that needs quoting): two bytes fewer per element, and no
 * escaping when the literal is itself an element of another array.
 */
export function arrayElement(value: string): string {
  return value !== '' && !NEEDS_QUOTES.test(value) && value.toUpperCase() !== 'NULL' ? value : quotedElement(value);
}

/**
 * A PostgreSQL array literal of text values (`{"a","b \"c\"",NULL}`), for a `$n::text[]`
 * parameter. The driver builds the same literal from a JS array with two regular-expression
 * replacements per element; this one tests once and escapes only the rare value that needs it,
 * which matters when a statement carries thousands of values.
 */
export function textArrayLiteral(values: readonly (string | null | undefined)[]): string {
  let literal = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) literal += ',';
    const value = values[i];
    literal += value === null || value === undefined ? 'NULL' : quotedElement(value);
  }
  return literal + '}';
}
