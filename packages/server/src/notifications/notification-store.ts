import type { Channel } from '../channels/provider.js';
import type { Database, Queryable } from '../db/connection.js';
import type { Reachability } from './choose-channel.js';
import { boolArray, int4Array, jsonbArray, textArray, timestamptzArray } from '../db/binary-array.js';
import { Coalescer } from '../db/coalescer.js';
import { reservationParams, type QuotaReservation } from '../limits/quota.js';

export type NotificationStatus = 'queued' | 'sending' | 'delivered' | 'bounced' | 'failed' | 'opted_out';

export interface NewNotification {
  id: string;
  protocolId: string;
  environment: 'production' | 'sandbox';
  wallet: string;
  subject: string;
  body: string;
  category: string;
  priority: string;
  preferredChannel: string | null;
  channel: Channel | null;
  status: 'queued' | 'failed' | 'opted_out';
  idempotencyKey: string | null;
  /** Set only with an idempotency key: what a request reusing the key is compared with. */
  payloadHash: string | null;
  templateId: string | null;
  templateVersion: number | null;
  templateVariables: Record<string, unknown> | null;
  broadcastId: string | null;
  scheduleId: string | null;
  lastError: string | null;
  writeReceipt: boolean;
  receiptStatus: 'disabled' | 'pending' | 'failed';
  receiptFailureReason: string | null;
  createdAt: Date;
}

/**
 * Registration, verified channels and subscription of each wallet, in one round trip. A channel is
 * reachable when its contact is stored and verified (linked, for Telegram).
 */
export async function loadReachability(db: Queryable, protocolId: string, wallets: string[]): Promise<Map<string, Reachability>> {
  return (await loadReachabilityMany(db, [{ protocolId, wallets }]))[0];
}

/** loadReachability for several senders' requests at once (one round trip), one map per request. */
export async function loadReachabilityMany(db: Queryable, requests: { protocolId: string; wallets: string[] }[]): Promise<Map<string, Reachability>[]> {
  const request: number[] = [];
  const protocols: string[] = [];
  const wallets: string[] = [];
  requests.forEach((r, i) => {
    for (const wallet of r.wallets) {
      request.push(i);
      protocols.push(r.protocolId);
      wallets.push(wallet);
    }
  });
  const rows = await db.query<{
    request: number;
    wallet: string;
    email: boolean;
    sms: boolean;
    telegram: boolean;
    subscribed: boolean | null;
    channels: Channel[] | null;
  }>(
    `SELECT q.request, i.wallet,
            (i.email_enc IS NOT NULL AND i.email_verified_at IS NOT NULL) AS email,
            (i.phone_enc IS NOT NULL AND i.phone_verified_at IS NOT NULL) AS sms,
            (i.telegram_chat_enc IS NOT NULL AND i.telegram_linked_at IS NOT NULL) AS telegram,
            s.subscribed, s.channels
     FROM unnest($1::int[], $2::text[], $3::text[]) AS q(request, protocol_id, wallet)
     JOIN identities i ON i.wallet = q.wallet
     LEFT JOIN subscriptions s ON s.protocol_id = q.protocol_id AND s.wallet = q.wallet`,
    [int4Array(request), textArray(protocols), textArray(wallets)],
  );
  const result = requests.map(() => new Map<string, Reachability>());
  for (const row of rows) {
    const verified = (['email', 'telegram', 'sms'] as const).filter((c) => row[c]);
    result[row.request].set(row.wallet, {
      verified,
      subscription: row.subscribed === null ? undefined : { subscribed: row.subscribed, channels: row.channels ?? [] },
    });
  }
  return result;
}

const COLUMNS = `id, protocol_id, environment, wallet, subject, body, category, priority, preferred_channel, channel, status,
  idempotency_key, payload_hash, template_id, template_version, template_variables, broadcast_id, schedule_id, last_error,
  write_receipt, receipt_status, receipt_failure_reason, receipt_requested_at, next_attempt_at, created_at, updated_at`;

/** INSERT … SELECT of rows given as the 23 column arrays of rowArrays ($1 … $23). */
const INSERT_ROWS = `INSERT INTO notifications (${COLUMNS})
     SELECT id, protocol_id, environment, wallet, subject, body, category, priority, preferred_channel, channel, status,
            idempotency_key, payload_hash, template_id, template_version, template_variables, broadcast_id, schedule_id, last_error,
            write_receipt, receipt_status, receipt_failure_reason,
            CASE WHEN write_receipt THEN created_at END,
            CASE WHEN status = 'queued' THEN created_at END,
            created_at, created_at
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                 $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::int[], $16::jsonb[], $17::text[], $18::text[],
                 $19::text[], $20::boolean[], $21::text[], $22::text[], $23::timestamptz[])
          AS r(id, protocol_id, environment, wallet, subject, body, category, priority, preferred_channel, channel, status,
               idempotency_key, payload_hash, template_id, template_version, template_variables, broadcast_id, schedule_id,
               last_error, write_receipt, receipt_status, receipt_failure_reason, created_at)`;

/** INSERT_ROWS's 23 parameters: one binary array per column (db/binary-array.ts). */
function rowArrays(rows: NewNotification[]): Buffer[] {
  const text = (pick: (row: NewNotification) => string | null) => textArray(rows.map(pick));
  return [
    text((r) => r.id),
    text((r) => r.protocolId),
    text((r) => r.environment),
    text((r) => r.wallet),
    text((r) => r.subject),
    text((r) => r.body),
    text((r) => r.category),
    text((r) => r.priority),
    text((r) => r.preferredChannel),
    text((r) => r.channel),
    text((r) => r.status),
    text((r) => r.idempotencyKey),
    text((r) => r.payloadHash),
    text((r) => r.templateId),
    int4Array(rows.map((r) => r.templateVersion)),
    jsonbArray(rows.map((r) => (r.templateVariables ? JSON.stringify(r.templateVariables) : null))),
    text((r) => r.broadcastId),
    text((r) => r.scheduleId),
    text((r) => r.lastError),
    boolArray(rows.map((r) => r.writeReceipt)),
    text((r) => r.receiptStatus),
    text((r) => r.receiptFailureReason),
    timestamptzArray(rows.map((r) => r.createdAt)),
  ];
}

/**
 * Inserts the rows in one statement. Rows whose idempotency key is already taken (by a committed
 * row, a concurrent transaction that then commits, or an earlier row of the same batch) are skipped;
 * the ids actually inserted are returned.
 */
export async function insertNotifications(db: Queryable, rows: NewNotification[]): Promise<Set<string>> {
  const inserted = await db.query<{ id: string }>(
    `${INSERT_ROWS}
     ON CONFLICT (protocol_id, environment, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
     RETURNING id`,
    rowArrays(rows),
  );
  return new Set(inserted.map((r) => r.id));
}

/** A request's rows and the reservation they need, for insertNotificationsReservingMany. */
export interface ReservingInsert {
  rows: NewNotification[];
  reservation: QuotaReservation;
}

/**
 * Inserts the rows of several requests without idempotency keys (which are all inserted) and
 * reserves each request's sends, in one statement and so one atomic step without a transaction
 * around it; answers, per request, whether its reservation fitted (and so whether its rows were
 * written).
 *
 * The statement first writes every row, then reserves each protocol's sends together (protocols
 * in id order, so concurrent statements lock usage rows in the same order): the usage rows stay
 * locked only from the reservation to the commit, so concurrent batches write their rows side by
 * side. A reservation that does not fit fails the statement (herald_refuse_unreserved), which
 * undoes every row, and the batch is run again reserving first (reserveFirst).
 */
export async function insertNotificationsReservingMany(db: Queryable, inserts: ReservingInsert[]): Promise<boolean[]> {
  const groups = reservationGroups(inserts);
  if (!groups) return oneByOne(db, inserts);
  const rows = inserts.flatMap((insert) => insert.rows);
  if (rows.some((row) => row.idempotencyKey !== null)) throw new Error('insertNotificationsReservingMany takes rows without idempotency keys');
  // A protocol refused this period is likely refused again: writing rows only to undo them would
  // make every batch it joins run twice.
  if (groups.some((group) => refusedIn.get(group.protocolId) === group.periodStart)) return reserveFirst(db, inserts, rows, groups);
  try {
    await db.query(
      `WITH inserted AS (
         ${INSERT_ROWS}
         RETURNING 1
       ), ${RESERVE_GROUPS('SELECT count(*) FROM inserted')}
       SELECT herald_refuse_unreserved(count(*)) FROM want w WHERE w.count > 0 AND w.protocol_id NOT IN (SELECT protocol_id FROM reserve)`,
      [...rowArrays(rows), ...groupParams(groups)],
    );
    return inserts.map(() => true);
  } catch (error) {
    if ((error as { code?: unknown }).code !== QUOTA_REFUSED) throw error;
  }
  return reserveFirst(db, inserts, rows, groups);
}

/** Raised by herald_refuse_unreserved (migration 016). */
const QUOTA_REFUSED = 'HQ402';

/** Protocol id → the period (its first day) in which its last reservation did not fit. */
const refusedIn = new Map<string, unknown>();

interface ReservationGroup {
  protocolId: string;
  /** The period's first day, as reservationParams gives it. */
  periodStart: unknown;
  /** The protocol's monthly limit; null with overage on. */
  quotaLimit: unknown;
  count: number;
  requests: number[];
}

/** The requests grouped by protocol, in protocol id order; undefined when a batch spans two periods. */
function reservationGroups(inserts: ReservingInsert[]): ReservationGroup[] | undefined {
  const byProtocol = new Map<string, ReservationGroup>();
  for (const [i, insert] of inserts.entries()) {
    const { protocol, count } = insert.reservation;
    const [, periodStart, , quotaLimit] = reservationParams(insert.reservation);
    const group = byProtocol.get(protocol.id);
    if (!group) byProtocol.set(protocol.id, { protocolId: protocol.id, periodStart, quotaLimit, count, requests: [i] });
    else {
      // A batch across a month boundary: the two periods are separate counters.
      if (group.periodStart !== periodStart) return undefined;
      group.count += count;
      group.requests.push(i);
    }
  }
  return [...byProtocol.values()].sort((a, b) => (a.protocolId < b.protocolId ? -1 : a.protocolId > b.protocolId ? 1 : 0));
}

/**
 * The `want` and `reserve` CTEs: each group's sends ($24 … $27, from groupParams) reserved in
 * protocol id order, with the limit in the WHERE so a counter never passes its quota; `reserve`
 * returns the protocols whose reservation fitted. `after`, when given, is a subquery the
 * reservation waits for (it runs first).
 */
const RESERVE_GROUPS = (after?: string) => `want AS (
         SELECT * FROM unnest($24::text[], $25::date[], $26::int[], $27::int[]) WITH ORDINALITY AS w(protocol_id, period_start, count, quota_limit, ord)
       ), reserve AS (
         INSERT INTO usage_periods AS u (protocol_id, period_start, sends)
         SELECT protocol_id, period_start, count FROM want
         WHERE count > 0 AND (quota_limit IS NULL OR count <= quota_limit)${after ? ` AND (${after}) IS NOT NULL` : ''}
         ORDER BY ord
         ON CONFLICT (protocol_id, period_start) DO UPDATE SET sends = u.sends + EXCLUDED.sends
           WHERE u.sends + EXCLUDED.sends <= coalesce((SELECT w.quota_limit FROM want w WHERE w.protocol_id = u.protocol_id), 2147483647)
         RETURNING protocol_id
       )`;

const groupParams = (groups: ReservationGroup[]) => [
  groups.map((group) => group.protocolId),
  groups.map((group) => group.periodStart),
  groups.map((group) => group.count),
  groups.map((group) => group.quotaLimit),
];

/**
 * The batch when a reservation did not fit: each protocol's sends reserved first, and the rows
 * written only for the protocols whose reservation fitted. When a protocol's requests do not fit
 * together, each is tried again on its own, in order, so every request gets the answer it would
 * have had alone.
 */
async function reserveFirst(db: Queryable, inserts: ReservingInsert[], rows: NewNotification[], groups: ReservationGroup[]): Promise<boolean[]> {
  const answers = await reserveFirstAnswers(db, inserts, rows, groups);
  for (const group of groups) {
    if (group.count === 0 || group.requests.some((i) => answers[i])) refusedIn.delete(group.protocolId);
    else refusedIn.set(group.protocolId, group.periodStart);
  }
  return answers;
}

async function reserveFirstAnswers(db: Queryable, inserts: ReservingInsert[], rows: NewNotification[], groups: ReservationGroup[]): Promise<boolean[]> {
  const allowed = await db.query<{ protocol_id: string }>(
    `WITH ${RESERVE_GROUPS()}, allowed AS (
       SELECT protocol_id FROM want WHERE count = 0 UNION ALL SELECT protocol_id FROM reserve
     ), inserted AS (
       ${INSERT_ROWS}
       WHERE r.protocol_id IN (SELECT protocol_id FROM allowed)
     )
     SELECT protocol_id FROM allowed`,
    [...rowArrays(rows), ...groupParams(groups)],
  );
  const fitted = new Set(allowed.map((row) => row.protocol_id));
  const answers = inserts.map((insert) => fitted.has(insert.reservation.protocol.id));
  for (const group of groups) {
    if (fitted.has(group.protocolId) || group.requests.length === 1) continue;
    // Too many together for what is left: each request on its own, first come first served.
    const alone = await oneByOne(db, group.requests.map((i) => inserts[i]));
    group.requests.forEach((i, k) => (answers[i] = alone[k]));
  }
  return answers;
}

async function oneByOne(db: Queryable, inserts: ReservingInsert[]): Promise<boolean[]> {
  const answers: boolean[] = [];
  for (const insert of inserts) answers.push(...(await reserveFirstAnswers(db, [insert], insert.rows, reservationGroups([insert])!)));
  return answers;
}

/**
 * The send path's two statements for requests without idempotency keys (reachability, then the
 * reserving insert), each run for many concurrent requests at once (see Coalescer): under load one
 * statement and one commit serve a whole batch of requests instead of one each.
 */
export interface SendBatches {
  reachability: Coalescer<{ protocolId: string; wallets: string[] }, Map<string, Reachability>>;
  insert: Coalescer<ReservingInsert, boolean>;
}

const sendBatches = new WeakMap<Queryable, SendBatches>();

/** The send batches of a database (one pair per database handle). */
export function sendBatchesFor(db: Queryable): SendBatches {
  let batches = sendBatches.get(db);
  if (!batches) {
    // PGlite runs one statement at a time: a second batch in flight would only wait for the first.
    const parallel = (db as Partial<Database>).engine === 'postgres';
    batches = {
      reachability: new Coalescer((requests) => loadReachabilityMany(db, requests), { maxInFlight: 1, maxBatch: 200 }),
      insert: new Coalescer((inserts) => insertNotificationsReservingMany(db, inserts), {
        maxInFlight: parallel ? 2 : 1,
        maxBatch: 200,
        extraBatchWeight: ROWS_FOR_A_SECOND_INSERT,
        weigh: (insert) => insert.rows.length,
      }),
    };
    sendBatches.set(db, batches);
  }
  return batches;
}

/**
 * Batches run one statement of each kind at a time: the reachability read of one batch overlaps
 * the insert of the one before, and a batch gathers every request that came while the previous
 * one ran. For single sends a second batch in flight only halved the batches, so each request
 * paid twice the statement's fixed cost (executor set-up, trigger, commit): about 30% more
 * PostgreSQL time per send, and a higher p99.
 *
 * Inserts are the exception once this many rows wait (a few bulk requests; single sends never
 * queue that many): writing the rows is then most of a statement's time, and it no longer holds
 * the usage rows while it writes (insertNotificationsReservingMany), so a second insert runs
 * beside the first instead of waiting for it.
 */
const ROWS_FOR_A_SECOND_INSERT = 500;

export interface IdempotentOriginal {
  id: string;
  idempotency_key: string;
  payload_hash: string;
}

/** The notifications already sent with these keys, by the protocol in the environment (keys are per both). */
export async function findByIdempotencyKeys(
  db: Queryable,
  protocolId: string,
  environment: NewNotification['environment'],
  keys: string[],
): Promise<Map<string, IdempotentOriginal>> {
  if (keys.length === 0) return new Map();
  const rows = await db.query<IdempotentOriginal>(
    'SELECT id, idempotency_key, payload_hash FROM notifications WHERE protocol_id = $1 AND environment = $2 AND idempotency_key = ANY($3::text[])',
    [protocolId, environment, keys],
  );
  return new Map(rows.map((r) => [r.idempotency_key, r]));
}

export interface NotificationRow {
  id: string;
  protocol_id: string;
  environment: string;
  wallet: string;
  subject: string;
  body: string;
  category: string;
  priority: string;
  preferred_channel: string | null;
  channel: Channel | null;
  fallback_channel: Channel | null;
  status: NotificationStatus;
  template_id: string | null;
  template_version: number | null;
  template_variables: Record<string, unknown> | null;
  broadcast_id: string | null;
  schedule_id: string | null;
  attempts: number;
  last_error: string | null;
  delivered_at: Date | null;
  write_receipt: boolean;
  receipt_status: string;
  receipt_requested_at: Date | null;
  receipt_tx: string | null;
  receipt_failure_reason: string | null;
  last_receipt_attempt_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  attempt: number;
  channel: string;
  provider: string;
  outcome: string;
  error: string | null;
  provider_response: string | null;
  duration_ms: number;
  created_at: Date;
}

export async function findNotification(db: Queryable, protocolId: string, id: string): Promise<NotificationRow | undefined> {
  const [row] = await db.query<NotificationRow>('SELECT * FROM notifications WHERE id = $1 AND protocol_id = $2', [id, protocolId]);
  return row;
}

export async function listAttempts(db: Queryable, notificationId: string): Promise<AttemptRow[]> {
  return db.query<AttemptRow>(
    `SELECT attempt, channel, provider, outcome, error, provider_response, duration_ms, created_at
     FROM delivery_attempts WHERE notification_id = $1 ORDER BY id`,
    [notificationId],
  );
}

export interface ListQuery {
  protocolId: string;
  page: number;
  limit: number;
  status?: string;
  wallet?: string;
}

/** The two statements of a listing (the total, then the page): a protocol's notifications, newest first. */
export function listStatements(q: ListQuery): { count: { text: string; params: unknown[] }; page: { text: string; params: unknown[] } } {
  const where = ['protocol_id = $1'];
  const params: unknown[] = [q.protocolId];
  if (q.status) {
    params.push(q.status);
    where.push(`status = $${params.length}`);
  }
  if (q.wallet) {
    params.push(q.wallet);
    where.push(`wallet = $${params.length}`);
  }
  const filter = where.join(' AND ');
  return {
    count: { text: `SELECT count(*)::int AS total FROM notifications WHERE ${filter}`, params },
    page: {
      text: `SELECT id, wallet, subject, status, channel, fallback_channel, receipt_status, receipt_tx, created_at FROM notifications WHERE ${filter}
     ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      params: [...params, q.limit, (q.page - 1) * q.limit],
    },
  };
}

export async function listNotifications(db: Queryable, q: ListQuery) {
  const { count, page } = listStatements(q);
  const [{ total }] = await db.query<{ total: number }>(count.text, count.params);
  const rows = await db.query<NotificationRow>(page.text, page.params);
  return { rows, total };
}
