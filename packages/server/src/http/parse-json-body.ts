import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from './errors.js';

/**
 * Why a JSON body cannot be read as sent, or undefined: it is read as UTF-8 JSON text, so a
 * compressed body (Content-Encoding other than `identity`, or a Transfer-Encoding coding other than
 * `chunked`) or one declared in another charset would be misread, and every JSON route refuses it
 * (415) instead.
 */
export function unreadableBody(headers: IncomingHttpHeaders): string | undefined {
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    return `Content-Encoding "${encoding}" is not supported; send the JSON body uncompressed`;
  }
  const transfer = headers['transfer-encoding'];
  if (transfer !== undefined && transfer.toLowerCase() !== 'chunked') {
    return `Transfer-Encoding "${transfer}" is not supported; send the JSON body uncompressed (chunked alone is fine)`;
  }
  // `application/json` alone, as nearly every client sends it, needs no further look.
  const type = headers['content-type'];
  if (type !== undefined && type.length > 16) {
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type)?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) return `Charset "${charset}" is not supported; send the JSON body in UTF-8`;
  }
  return undefined;
}

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
 * A body's bytes as text. Bytes that are not UTF-8 would be decoded as U+FFFD and stored so,
 * not as sent: refused (400) instead. Only a text holding U+FFFD can have had such bytes, so a
 * body without one is not checked again.
 */
export function utf8Text(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  if (text.includes('\uFFFD') && !isUtf8(bytes)) throw new ApiError('VALIDATION_ERROR', 'Request body is not valid UTF-8 text');
  return text;
}

/** The JSON escapes of a NUL character or of half a surrogate pair. */
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored as sent, or undefined. */
function unstorable(text: string): string | undefined {
  if (text.includes('\0')) return 'must not contain the NUL character (\\u0000)';
  // UTF-8 has no encoding for half a surrogate pair: it would be stored as U+FFFD, not as sent.
  if (LONE_SURROGATE.test(text)) return 'must be valid Unicode text (it has an unpaired surrogate, \\uD800-\\uDFFF)';
  return undefined;
}

/**
 * The first string of a parsed body, value or key, that cannot be stored as sent (a NUL
 * character, half a surrogate pair), as the refusal naming where it stands (`subject must …`,
 * `notifications[1].body must …`, `templateVariables.a must …`), or undefined when there is none.
 */
export function unstorableTextProblem(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') {
    const reason = unstorable(value);
    return reason && `${path || 'body'} ${reason}`;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableTextProblem(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    const reason = unstorable(key);
    if (reason) return `${JSON.stringify(at).slice(1, -1)} ${reason}`;
    const found = unstorableTextProblem(item, at);
    if (found) return found;
  }
  return undefined;
}

/**
 * A request body as JSON; an empty body is no body. Malformed JSON throws a SyntaxError (400). Text
 * that cannot be stored as sent (a NUL character, `\u0000`, which PostgreSQL text cannot hold; half
 * a surrogate pair, `\ud800`, which UTF-8 cannot encode) is refused here, naming the field, for
 * every route alike: a route that stores nothing (a preview) must not accept what the matching
 * send refuses, and nothing is stored other than as it was sent.
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
    // JSON.parse would name an invisible character: say what it is.
    if (text.charCodeAt(0) === 0xfeff) throw new ApiError('VALIDATION_ERROR', 'Malformed JSON body: it starts with a byte-order mark (U+FEFF); send the JSON without one');
    (error as { statusCode?: number }).statusCode = 400;
    throw error;
  }
  // Only a body that writes an escape can hold either: JSON allows no raw control characters, and
  // a body decoded from UTF-8 has no unpaired surrogates.
  const problem = UNSTORABLE_ESCAPE.test(text) ? unstorableTextProblem(value) : undefined;
  if (problem) throw new ApiError('VALIDATION_ERROR', problem);
  return value;
}
