import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/connection.js';
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
 * Takes the codes' places within the hourly limits before they are sent, or refuses (429, with the
 * wait): a number or an inbox cannot be flooded with codes through registrations, whoever signs
 * them, and a wallet cannot pump messages to destination after destination faster than the per-IP
 * limit already allows. Each 6-digit code gets 5 tries, so the limit per destination also bounds
 * guesses at 25 an hour. The count and the places taken are one transaction holding a lock per
 * limit, so registrations arriving together cannot all read the same count. Answers how to give
 * back the places of codes that did not go out (a process that dies before it sends keeps them
 * taken until the hour is over: the limits err on the side of fewer codes).
 */
export async function reserveCodeSends(db: Database, secrets: SecretBox, sends: CodeSend[], now: Date): Promise<(unsent: CodeSend[]) => Promise<void>> {
  if (sends.length === 0) return async () => {};
  const wallet = walletSubject(sends[0].wallet);
  const limits = new Map<string, number>([[wallet, CODES_PER_WALLET - (sends.length - 1)]]);
  for (const send of sends) limits.set(destination(secrets, send), CODES_PER_DESTINATION);
  const subjects = [...limits.keys()].sort();
  const reservation = randomUUID();
  const since = new Date(now.getTime() - WINDOW_MS);
  await db.transaction(async (tx) => {
    // In one order, so two registrations sharing limits never wait on each other in a circle.
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended(s, 0)) FROM unnest($1::text[]) AS s ORDER BY s', [subjects]);
    const rows = await tx.query<{ subject: string; sent: number; oldest: Date }>(
      `SELECT subject, count(*)::int AS sent, min(sent_at) AS oldest FROM identity_code_sends
       WHERE subject = ANY($1::text[]) AND sent_at > $2 GROUP BY subject`,
      [subjects, since],
    );
    for (const row of rows) {
      if (row.sent < limits.get(row.subject)!) continue;
      const retryAfter = Math.max(1, Math.ceil((row.oldest.getTime() + WINDOW_MS - now.getTime()) / 1000));
      const limit = row.subject === wallet ? CODES_PER_WALLET : CODES_PER_DESTINATION;
      const what = row.subject === wallet ? `this wallet (${limit} an hour)` : `this address or number (${limit} an hour)`;
      // The rate-limit headers describe the limit that refused, not the per-IP one the request is
      // within (the policy closest to exhaustion, as the IETF RateLimit header fields draft has
      // it), so they agree with Retry-After.
      throw new ApiError('RATE_LIMIT_EXCEEDED', `Too many verification codes sent to ${what}; retry after ${retryAfter}s`, {
        'retry-after': String(retryAfter),
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(Math.ceil(now.getTime() / 1000) + retryAfter),
      });
    }
    await tx.query('INSERT INTO identity_code_sends (subject, sent_at, reservation) SELECT unnest($1::text[]), $2, $3', [placesOf(secrets, sends), now, reservation]);
  });
  // Out of the hour: forgotten outside the locks, so registrations for other limits never wait on it.
  await db.query('DELETE FROM identity_code_sends WHERE sent_at <= $1', [since]);
  return async (unsent) => {
    if (unsent.length === 0) return;
    // One place per subject and code: a subject named twice (the wallet, for two codes) gives back two.
    await db.query(
      `DELETE FROM identity_code_sends WHERE ctid IN (
         SELECT ctid FROM (
           SELECT ctid, subject, row_number() OVER (PARTITION BY subject) AS n FROM identity_code_sends WHERE reservation = $1
         ) AS taken
         JOIN (SELECT subject, count(*) AS n FROM unnest($2::text[]) AS subject GROUP BY subject) AS back USING (subject)
         WHERE taken.n <= back.n
       )`,
      [reservation, placesOf(secrets, unsent)],
    );
  };
}

/** The places a set of codes takes: one under its destination's limit and one under its wallet's. */
function placesOf(secrets: SecretBox, sends: CodeSend[]): string[] {
  return sends.flatMap((send) => [destination(secrets, send), walletSubject(send.wallet)]);
}
