import type { Queryable } from '../db/connection.js';
import { lockDue } from '../db/claim-due.js';
import { newId } from '../ids.js';
import { loadTemplateVersions } from '../templates/template-store.js';
import type { Settlement, UnreachableContact } from './settle.js';

/** A due notification as the worker reads it. */
export interface DueNotification {
  id: string;
  protocol_id: string;
  environment: 'production' | 'sandbox';
  wallet: string;
  subject: string;
  body: string;
  category: string;
  priority: string;
  channel: 'email' | 'telegram' | 'sms';
  fallback_channel: 'sms' | null;
  template_id: string | null;
  template_version: number | null;
  template_variables: Record<string, unknown> | null;
  /**
   * Attempts including the one being made. With `fallback_channel` (set once, when the counter
   * starts again for the SMS fallback) it is the claim's fencing token: the pair never repeats.
   */
  attempts: number;
}

/** A claim as its fencing token names it: the attempt counter and the fallback it was made under. */
export type ClaimToken = Pick<DueNotification, 'id' | 'attempts' | 'fallback_channel'>;

/** The fence on notification `n` of a claim whose token and fallback are `token` and `fallback`: still this worker's. */
const holdsClaim = (token: string, fallback: string) =>
  `n.attempts = ${token} AND n.fallback_channel IS NOT DISTINCT FROM ${fallback} AND n.status = 'sending'`;
/** The fence of a claim `c` (id, token, fallback) on notification `n`. */
const HOLDS_CLAIM = `n.id = c.id AND ${holdsClaim('c.token', 'c.fallback')}`;
const claimParams = (claims: ClaimToken[]) => [claims.map((c) => c.id), claims.map((c) => c.attempts), claims.map((c) => c.fallback_channel)];

const COLUMNS = [
  'id', 'protocol_id', 'environment', 'wallet', 'subject', 'body', 'category', 'priority', 'channel',
  'fallback_channel', 'template_id', 'template_version', 'template_variables', 'attempts',
];
const DUE = { table: 'notifications', dueColumn: 'next_attempt_at', where: `status IN ('queued', 'sending')`, returning: COLUMNS };

/**
 * Locks the due notifications for the caller's transaction (see lockDue), oldest due first. The
 * rows are unchanged: `attempts` is answered as it will be once this attempt is made. The worker
 * then leases the rows it must send through a provider (leaseNotifications) and settles the
 * captured ones before the transaction ends.
 */
export async function lockDueNotifications(tx: Queryable, limit: number, now: Date): Promise<DueNotification[]> {
  const rows = await lockDue<DueNotification>(tx, DUE, { limit, now });
  for (const row of rows) row.attempts += 1;
  return rows;
}

/** Marks locked rows `sending` under a lease until `lockedUntil`, counting the attempt. */
export async function leaseNotifications(tx: Queryable, ids: string[], lockedUntil: Date): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    `UPDATE notifications SET status = 'sending', attempts = attempts + 1, locked_until = $2 WHERE id = ANY($1::text[])`,
    [ids, lockedUntil],
  );
}

/** The notifications with the template version each recorded (or null). */
export async function withTemplates<T extends DueNotification>(db: Queryable, rows: T[]) {
  const refs = rows.flatMap((n) => (n.template_id && n.template_version ? [{ templateId: n.template_id, version: n.template_version }] : []));
  const templates = refs.length ? await loadTemplateVersions(db, refs) : new Map();
  return rows.map((n) => ({ ...n, template: n.template_id ? (templates.get(`${n.template_id}@${n.template_version}`) ?? null) : null }));
}

export async function protocolNames(db: Queryable, ids: string[]): Promise<Map<string, string>> {
  const rows = await db.query<{ id: string; name: string }>('SELECT id, name FROM protocols WHERE id = ANY($1::text[])', [ids]);
  return new Map(rows.map((r) => [r.id, r.name]));
}

/**
 * Writes a batch of outcomes in one transaction: the notification rows (only where this worker
 * still holds the claim, fenced by the attempt counter and the fallback it was claimed under), every attempt record, and the events of
 * the rows that reached a final state. Returns the ids whose state was written. `held` rows are
 * locked by the caller's transaction (lockDueNotifications) and were never leased: no fence.
 */
export async function commitSettlements(db: Queryable, settled: Settlement[], now: Date, { held = false } = {}): Promise<Set<string>> {
  if (settled.length === 0) return new Set();
  const col = <T>(pick: (s: Settlement) => T) => settled.map(pick);
  const updated = await db.query<{ id: string }>(
    `UPDATE notifications AS n SET
       status = u.status, attempts = u.attempts, fallback_channel = u.fallback_channel,
       next_attempt_at = u.next_attempt_at, delivered_at = u.delivered_at, last_error = u.last_error,
       locked_until = NULL, updated_at = $9,
       -- A message that ends bounced, failed or opted out never gets its requested receipt (SET sees the old row).
       receipt_status = CASE WHEN n.receipt_status = 'pending' AND u.status IN ('bounced', 'failed', 'opted_out') THEN 'failed' ELSE n.receipt_status END,
       receipt_failure_reason = CASE WHEN n.receipt_status = 'pending' AND u.status IN ('bounced', 'failed', 'opted_out')
         THEN 'notification was not delivered (' || u.status || ')' ELSE n.receipt_failure_reason END
     FROM unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::text[], $6::timestamptz[], $7::timestamptz[], $8::text[], $10::text[])
       AS u(id, token, status, attempts, fallback_channel, next_attempt_at, delivered_at, last_error, claimed_fallback)
     WHERE n.id = u.id ${held ? '' : `AND ${holdsClaim('u.token', 'u.claimed_fallback')}`}
     RETURNING n.id`,
    [
      col((s) => s.id),
      col((s) => s.token),
      col((s) => s.status),
      col((s) => s.attempts),
      col((s) => s.fallbackChannel),
      col((s) => s.nextAttemptAt?.toISOString() ?? null),
      col((s) => s.deliveredAt?.toISOString() ?? null),
      col((s) => s.lastError),
      now,
      col((s) => s.claimedFallback),
    ],
  );
  const written = new Set(updated.map((r) => r.id));
  const attempts = settled.flatMap((s) => (s.attempt ? [{ id: s.id, ...s.attempt }] : []));
  // Attempts are recorded whether or not the claim was still held (the provider was called
  // either way), so they are not fenced like the rows: an attempt already recorded at `now` is
  // one a try that committed, and lost its answer, wrote.
  if (attempts.length) await db.query(
    `INSERT INTO delivery_attempts (notification_id, attempt, channel, provider, outcome, provider_response, error, duration_ms, created_at)
     SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::timestamptz[])
       AS a(notification_id, attempt, channel, provider, outcome, provider_response, error, duration_ms, created_at)
     WHERE NOT EXISTS (
       SELECT 1 FROM delivery_attempts d
       WHERE d.notification_id = a.notification_id AND d.attempt = a.attempt AND d.channel = a.channel AND d.created_at = a.created_at
     )`,
    [
      attempts.map((a) => a.id),
      attempts.map((a) => a.attempt),
      attempts.map((a) => a.channel),
      attempts.map((a) => a.provider),
      attempts.map((a) => a.outcome),
      attempts.map((a) => a.providerResponse),
      attempts.map((a) => a.error),
      attempts.map((a) => a.durationMs),
      attempts.map(() => now.toISOString()),
    ],
  );
  await forgetUnreachableContacts(
    db,
    settled.flatMap((s) => (s.unreachableContact && written.has(s.id) ? [s.unreachableContact] : [])),
    now,
  );
  const events = settled.filter((s) => s.event && written.has(s.id));
  if (events.length) {
    await db.query(
      // An event no active endpoint of its protocol subscribes to is recorded as already fanned
      // out: the fan-out would find nothing to send, and this spares it a pass and an update.
      `INSERT INTO events (id, protocol_id, type, data, created_at, fanned_out_at)
       SELECT e.id, n.protocol_id, e.type, e.data, $4,
              CASE WHEN NOT EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.protocol_id = n.protocol_id AND w.is_active AND e.type = ANY(w.events))
                   THEN $4::timestamptz END
       FROM unnest($1::text[], $2::text[], $3::jsonb[], $5::text[]) AS e(id, type, data, notification_id)
       JOIN notifications n ON n.id = e.notification_id`,
      [events.map(() => newId.event()), events.map((s) => s.event!.type), events.map((s) => JSON.stringify(s.event!.data)), now, events.map((s) => s.id)],
    );
  }
  return written;
}

/**
 * Takes away the verified mark of Telegram chats and phone numbers their provider refused for good
 * (a blocked bot, a number opted out with STOP): the wallet's next sends go to its other verified
 * channels instead of failing on this one, and the owner verifies it again to get it back. Only
 * the contact that was sent to: one changed since keeps its state.
 */
async function forgetUnreachableContacts(db: Queryable, contacts: UnreachableContact[], now: Date): Promise<void> {
  if (contacts.length === 0) return;
  // One row per wallet (an UPDATE applies one joined row per target row), in wallet order, so
  // concurrent batches lock identities in the same order.
  const byWallet = new Map<string, { telegram?: string; sms?: string }>();
  for (const c of contacts) byWallet.set(c.wallet, { ...byWallet.get(c.wallet), [c.channel]: c.sealed });
  const wallets = [...byWallet.keys()].sort();
  await db.query(
    `UPDATE identities AS i SET
       telegram_linked_at = CASE WHEN i.telegram_chat_enc = u.telegram THEN NULL ELSE i.telegram_linked_at END,
       phone_verified_at = CASE WHEN i.phone_enc = u.sms THEN NULL ELSE i.phone_verified_at END,
       updated_at = $4
     FROM unnest($1::text[], $2::text[], $3::text[]) AS u(wallet, telegram, sms)
     WHERE i.wallet = u.wallet AND (i.telegram_chat_enc = u.telegram OR i.phone_enc = u.sms)`,
    [wallets, wallets.map((w) => byWallet.get(w)!.telegram ?? null), wallets.map((w) => byWallet.get(w)!.sms ?? null), now],
  );
}

/**
 * Extends the lease of claims this worker still holds (same fencing token, still `sending`) to
 * `lockedUntil`. A claim that was settled, given back or taken by another worker is left alone.
 * The lock taken is NO KEY UPDATE (only the lease changes), which an insert referring to the row
 * (an attempt, a receipt) does not block with its KEY SHARE lock, however long it holds it.
 * Rows locked by a transaction settling or giving them back are skipped rather than waited for:
 * that transaction and this statement would lock the batch's rows in different orders, and
 * those rows need no lease once it commits (a row skipped so is renewed by the next call).
 * Answers the ids of the claims this worker no longer holds at all (settled, given back or taken
 * over): read without locking, so a row that is only locked for a moment is never among them.
 */
export async function renewLeases(db: Queryable, claims: ClaimToken[], lockedUntil: Date): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const rows = await db.query<{ id: string }>(
    // The UPDATE runs whether or not the query reads it; the SELECT reads the rows as they were
    // before it, which it does not change (only the lease).
    `WITH renewed AS (
       UPDATE notifications SET locked_until = $4
       WHERE id IN (
         SELECT n.id FROM notifications n JOIN unnest($1::text[], $2::int[], $3::text[]) AS c(id, token, fallback) ON ${HOLDS_CLAIM}
         FOR NO KEY UPDATE OF n SKIP LOCKED
       )
       RETURNING id
     )
     SELECT c.id FROM unnest($1::text[], $2::int[], $3::text[]) AS c(id, token, fallback)
     WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE ${HOLDS_CLAIM})`,
    [...claimParams(claims), lockedUntil],
  );
  return new Set(rows.map((row) => row.id));
}

/** Gives unstarted claims back (graceful shutdown): they become due again at once. */
export async function releaseClaims(db: Queryable, claims: ClaimToken[]): Promise<void> {
  if (claims.length === 0) return;
  await db.query(
    `UPDATE notifications AS n SET status = 'queued', attempts = n.attempts - 1, locked_until = NULL
     FROM unnest($1::text[], $2::int[], $3::text[]) AS c(id, token, fallback)
     WHERE ${HOLDS_CLAIM}`,
    claimParams(claims),
  );
}
