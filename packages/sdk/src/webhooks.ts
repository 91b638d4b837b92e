/**
 * Verifying Herald's webhook requests. Standalone, so a receiver can import it without the client.
 * It needs `node:crypto`, obtained when a function runs (not imported), so that the main entry,
 * which re-exports these helpers, still loads where there is none (a browser, a Worker without
 * node compatibility).
 */
import type * as NodeCrypto from 'node:crypto';

export interface VerifyOptions {
  /** Largest accepted distance, in seconds, between the signed timestamp and now (either way). Default 300. */
  toleranceSeconds?: number;
  /** The current time (a Date or milliseconds since the epoch); defaults to the clock. */
  now?: Date | number;
}

/** The name of the header carrying the signature, as Node lower-cases it. */
export const SIGNATURE_HEADER = 'x-service-signature';

/**
 * Checks the `x-service-signature` header of a webhook request: `t=<unix seconds>,v1=<hex>`, where
 * the hex is HMAC-SHA256 of `<t>.<raw body>` (`t` exactly as written in the header) keyed with the
 * endpoint secret (the whole `whsec_…` string as UTF-8). Returns true only when a `v1` entry
 * matches (several are allowed, e.g. during a secret rotation) and `t` is within
 * `toleranceSeconds` of now; false for anything else, including a missing or malformed header or
 * a body that is neither a string nor bytes. Never throws for bad input: answer 401 on false.
 * Throws a TypeError only for programming errors: an empty secret, a `toleranceSeconds` that is
 * not a finite number ≥ 0, or a `now` that is not a valid time.
 *
 * Pass the body exactly as received (the raw bytes or string), never re-serialized JSON.
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string,
  { toleranceSeconds = 300, now }: VerifyOptions = {},
): boolean {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('verifyWebhookSignature needs the endpoint secret');
  // NaN or a negative number would otherwise let the comparison below accept any age.
  if (typeof toleranceSeconds !== 'number' || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new TypeError('verifyWebhookSignature: toleranceSeconds must be a finite number ≥ 0');
  }
  const { timingSafeEqual } = nodeCrypto();
  // ArrayBuffer.isView rather than instanceof: a Buffer made in another realm (a test runner's VM) is still bytes.
  if (typeof rawBody !== 'string' && !(ArrayBuffer.isView(rawBody) && rawBody.BYTES_PER_ELEMENT === 1)) return false;
  const parsed = parseSignatureHeader(header);
  if (!parsed) return false;
  const nowSeconds = Math.floor((now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime()) / 1000);
  // An invalid clock would disable the age check as a NaN tolerance would.
  if (!Number.isFinite(nowSeconds)) throw new TypeError('verifyWebhookSignature: now must be a valid Date or number of milliseconds');
  if (Math.abs(nowSeconds - Number(parsed.timestamp)) > toleranceSeconds) return false;
  const encoder = new TextEncoder();
  const expected = encoder.encode(signatureHex(rawBody, secret, parsed.timestamp));
  let matched = false;
  // Every candidate is compared, in constant time, so timing tells nothing about which one matched.
  for (const candidate of parsed.signatures) {
    const given = encoder.encode(candidate);
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}

/**
 * The header value Herald would send for `rawBody` at `timestamp` (Unix seconds): for testing a
 * receiver without a running gateway.
 */
export function signWebhookPayload(rawBody: string | Uint8Array, secret: string, timestamp: number = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${signatureHex(rawBody, secret, String(timestamp))}`;
}

/** `timestamp` is the header's text, as written: the contract signs that, not the number it denotes. */
function signatureHex(rawBody: string | Uint8Array, secret: string, timestamp: string): string {
  const hmac = nodeCrypto().createHmac('sha256', secret).update(`${timestamp}.`, 'utf8');
  // Bytes are signed as they are: decoding them first could alter a body that is not valid UTF-8.
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return hmac.digest('hex');
}

/** `t` (exactly one, whole seconds, kept as written) and every `v1` entry; other schemes are ignored. */
function parseSignatureHeader(header: string | null | undefined): { timestamp: string; signatures: string[] } | null {
  if (typeof header !== 'string' || header.length > 4096) return null;
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    const key = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) return null;
      timestamp = value;
    } else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) {
      signatures.push(value);
    }
  }
  return timestamp === undefined || signatures.length === 0 ? null : { timestamp, signatures };
}

/**
 * `node:crypto`, looked up at call time through `process.getBuiltinModule` (Node ≥ 20.16, Bun,
 * Deno, Workers with node compatibility) so that no module of the SDK imports it statically.
 */
function nodeCrypto(): typeof NodeCrypto {
  const crypto = globalThis.process?.getBuiltinModule?.('node:crypto');
  if (!crypto) {
    throw new Error('Webhook signatures need node:crypto through process.getBuiltinModule (Node ≥ 20.16, Bun, Deno or Workers with nodejs_compat)');
  }
  return crypto;
}
