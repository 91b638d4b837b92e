import { ApiError } from './errors.js';

/**
 * The deepest nesting of arrays and objects a request body may have. Real payloads stay within a
 * handful of levels; far deeper documents only serve to exhaust a stack: a jsonb value nested
 * about a thousand levels crashes PGlite's WebAssembly PostgreSQL, and recursive walks (payload
 * hashing, JSON.stringify) overflow the JavaScript stack a little deeper.
 */
export const MAX_JSON_DEPTH = 32;

/** Whether arrays and objects in `text` nest deeper than `max`; strings are skipped, escapes and all. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: the next quote not escaped by an odd run of backslashes.
      for (;;) {
        const end = text.indexOf('"', i + 1);
        if (end < 0) return false;
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        i = end;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * Where the first NUL character of a parsed body stands (`subject`, `notifications[1].body`,
 * `templateVariables.a`), in a value or a key, or undefined when there is none.
 */
export function nulCharacterPath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path || 'body' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulCharacterPath(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\0')) return at.replace(/\0/g, '\\u0000');
    const found = nulCharacterPath(item, at);
    if (found) return found;
  }
  return undefined;
}

/**
 * A request body as JSON; an empty body is no body. Malformed JSON throws a SyntaxError (400). A
 * NUL character (JSON's `\u0000`) is refused here, naming the field, for every route alike:
 * PostgreSQL text cannot hold one, and a route that stores nothing (a preview) must not accept
 * what the matching send refuses.
 */
export function parseJsonBody(text: string): unknown {
  if (text === '') return undefined;
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new ApiError('VALIDATION_ERROR', `Request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    (error as { statusCode?: number }).statusCode = 400;
    throw error;
  }
  // Only a body that writes the escape can hold the character (JSON allows no raw control characters).
  const nul = text.includes('\\u0000') ? nulCharacterPath(value) : undefined;
  if (nul) throw new ApiError('VALIDATION_ERROR', `${nul} must not contain the NUL character (\\u0000)`);
  return value;
}
