import { randomBytes } from 'node:crypto';

/**
 * A new endpoint secret: `whsec_` and 32 random bytes in base64url. The whole string, prefix
 * included, is the HMAC key (as UTF-8), as in Stripe's scheme, so Stripe's verifier accepts it.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
