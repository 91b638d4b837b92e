const QUOTED = /["\\]/;
const QUOTE_OR_BACKSLASH = /["\\]/g;

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
    if (value === null || value === undefined) literal += 'NULL';
    else literal += `"${QUOTED.test(value) ? value.replace(QUOTE_OR_BACKSLASH, '\\$&') : value}"`;
  }
  return literal + '}';
}
