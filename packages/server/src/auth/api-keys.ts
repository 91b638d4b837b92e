import { createHash, randomBytes } from 'node:crypto';

export type Environment = 'production' | 'sandbox';

const KEY_PATTERN = /^hrld_(live|test)_[A-Za-z0-9]{32,64}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 40 characters of base62 from a CSPRNG (~238 bits): the secret part of a key or token. */
export function randomToken(length = 40): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  // Rejection sampling keeps every character equally likely.
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    if (bytes[i] < 248) out += ALPHABET[bytes[i] % 62];
  }
  return out.length === length ? out : randomToken(length);
}

export function generateApiKey(environment: Environment): string {
  return `hrld_${environment === 'production' ? 'live' : 'test'}_${randomToken()}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The shape check done before any lookup; malformed keys never reach the database. */
export function parseApiKey(key: string): { environment: Environment } | null {
  const match = KEY_PATTERN.exec(key);
  if (!match) return null;
  return { environment: match[1] === 'live' ? 'production' : 'sandbox' };
}

/** What a key looks like when shown back: its prefix and the first four secret characters. */
export function displayPrefix(key: string): string {
  return key.slice(0, 'hrld_live_'.length + 4);
}
