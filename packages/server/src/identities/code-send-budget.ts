import type { SecretBox } from '../crypto/secret-box.js';
import type { Queryable } from '../db/connection.js';
import { ApiError } from '../http/errors.js';

const WINDOW_MS = 60 * 60 * 1000;
/** Codes a phone number or an email address may receive per hour, whichever wallet asks. */
export const CODES_PER_DESTINATION = 5;
/** Codes one wallet may have sent per hour, to all its destinations together. */
export const CODES_PER_WALLET = 10;

export interface CodeSend {
  wallet: string;
  channel: 'email' | 'sms';
  to: string;
}

const destination = (secrets: SecretBox, send: CodeSend) => `to:${secrets.digest(`code-destination:${send.channel}:${send.to.toLowerCase()}`)}`;
const walletSubject = (wallet: string) => `wallet:${wallet}`;

/**
 * Refuses (429, with the wait) codes that would pass the hourly limits: a number or an inbox
 * cannot be flooded with codes through registrations, whoever signs them, and a wallet cannot
 * pump messages to destination after destination faster than the per-IP limit already allows.
 * Each 6-digit code gets 5 tries, so the limit per destination also bounds guesses at 25 an hour.
 */
export async function checkCodeBudget(db: Queryable, secrets: SecretBox, sends: CodeSend[], now: Date): Promise<void> {
  if (sends.length === 0) return;
  const limits = new Map<string, number>([[walletSubject(sends[0].wallet), CODES_PER_WALLET - (sends.length - 1)]]);
  for (const send of sends) limits.set(destination(secrets, send), CODES_PER_DESTINATION);
  const since = new Date(now.getTime() - WINDOW_MS);
  const rows = await db.query<{ subject: string; sent: number; oldest: Date }>(
    `SELECT subject, count(*)::int AS sent, min(sent_at) AS oldest FROM identity_code_sends
     WHERE subject = ANY($1::text[]) AND sent_at > $2 GROUP BY subject`,
    [[...limits.keys()], since],
  );
  for (const row of rows) {
    if (row.sent < limits.get(row.subject)!) continue;
    const retryAfter = Math.max(1, Math.ceil((row.oldest.getTime() + WINDOW_MS - now.getTime()) / 1000));
    const what = row.subject.startsWith('wallet:') ? `this wallet (${CODES_PER_WALLET} an hour)` : `this address or number (${CODES_PER_DESTINATION} an hour)`;
    throw new ApiError('RATE_LIMIT_EXCEEDED', `Too many verification codes sent to ${what}; retry after ${retryAfter}s`, { 'Retry-After': String(retryAfter) });
  }
}

/** Records codes just sent, and forgets sends older than the window. */
export async function recordCodeSends(db: Queryable, secrets: SecretBox, sends: CodeSend[], now: Date): Promise<void> {
  if (sends.length === 0) return;
  const subjects = sends.flatMap((send) => [destination(secrets, send), walletSubject(send.wallet)]);
  await db.query('INSERT INTO identity_code_sends (subject, sent_at) SELECT unnest($1::text[]), $2', [subjects, now]);
  await db.query('DELETE FROM identity_code_sends WHERE sent_at <= $1', [new Date(now.getTime() - WINDOW_MS)]);
}
