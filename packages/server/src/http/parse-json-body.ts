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

/** A request body as JSON; an empty body is no body. Malformed JSON throws a SyntaxError (400). */
export function parseJsonBody(text: string): unknown {
  if (text === '') return undefined;
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new ApiError('VALIDATION_ERROR', `Request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    (error as { statusCode?: number }).statusCode = 400;
    throw error;
  }
}
