import { createHmac } from 'node:crypto';

/**
 * The `x-service-signature` value: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
 * keyed with the endpoint secret string as UTF-8. During a secret rotation `secrets` holds the new
 * secret and the one it replaced: one `v1` entry each, the new one first.
 */
export function signatureHeader(body: string, secrets: string | readonly string[], timestamp: number): string {
  const signed = `${timestamp}.${body}`;
  const entries = [secrets].flat().map((secret) => `v1=${createHmac('sha256', secret).update(signed, 'utf8').digest('hex')}`);
  return `t=${timestamp},${entries.join(',')}`;
}
