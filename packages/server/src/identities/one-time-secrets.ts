import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

export const CODE_TTL_MS = 10 * 60 * 1000;
export const CODE_MAX_ATTEMPTS = 5;
export const LINK_TOKEN_TTL_MS = 10 * 60 * 1000;

/** A 6-digit verification code, leading zeros kept. */
export function newVerificationCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** A Telegram deep-link start parameter: 32 characters of [A-Za-z0-9_-], as Telegram allows. */
export function newLinkToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Link tokens carry 192 random bits, so a plain hash is enough to make a stolen table useless. */
export function hashLinkToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function newNonce(): string {
  return randomBytes(16).toString('hex');
}

/** Compares two hex digests without leaking where they differ. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
