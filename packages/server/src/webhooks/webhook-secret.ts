import { randomBytes } from 'node:crypto';

/**
 * A new endpoint secret: `whsec_` and 32 random bytes in base64url. The whole string, prefix
 * included, is the HMAC key (as UTF-8), as in Stripe's scheme, so Stripe's verifier accepts it.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** How long a replaced secret stays valid by default: Svix's 24 hours. */
export const DEFAULT_PREVIOUS_SECRET_SECONDS = 24 * 60 * 60;

interface RotatedSecrets {
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
}

/** Until when the secret a rotation replaced is still signed with; undefined when none is. */
export function previousSecretExpiry(endpoint: RotatedSecrets, now: Date): Date | undefined {
  const expires = endpoint.previous_secret_expires_at;
  return endpoint.previous_secret_enc !== null && expires !== null && expires > now ? expires : undefined;
}

/**
 * The secrets a request to the endpoint is signed with: its secret, then the one a rotation
 * replaced while that one is still valid.
 */
export function signingSecrets(secrets: { decrypt(stored: string): string }, endpoint: RotatedSecrets, now: Date): string[] {
  const current = secrets.decrypt(endpoint.secret_enc);
  return previousSecretExpiry(endpoint, now) ? [current, secrets.decrypt(endpoint.previous_secret_enc!)] : [current];
}
