import type { Channel } from '../channels/provider.js';
import type { Database, Queryable } from '../db/connection.js';
import { boolArray, int4Array, jsonbArray, textArray, timestamptzArray } from '../db/binary-array.js';
import { Coalescer } from '../db/coalescer.js';
import { reservationParams, type QuotaProtocol } from '../limits/quota.js';
import { COUNT_NEW_NOTIFICATIONS } from '../reporting/notification-counts.js';
import { decideChannels, NO_CHANNEL } from './choose-channel.js';

export type NotificationStatus = 'queued' | 'sending' | 'delivered' | 'bounced' | 'failed' | 'opted_out';

/**
 * A notification as the send path hands it to the store: what the request says. Its channel,
 * status, error and receipt status are decided by the statement that writes it (decideChannels),
 * from the recipient's identity and subscription at that moment.
 */
export interface DraftNotification {
  id: string;
  protocolId: string;
  environment: 'production' | 'sandbox';
  wallet: string;
  subject: string;
  body: string;
  category: string;
  priority: string;
  preferredChannel: Channel | null;
  idempotencyKey: string | null;
  /** Set only with an idempotency key: what a request reusing the key is compared with. */
  payloadHash: string | null;
  templateId: string | null;
  templateVersion: number | null;
  templateVariables: Record<string, unknown> | null;
  broadcastId: string | null;
  scheduleId: string | null;
  writeReceipt: boolean;
  createdAt: Date;
  /** A single send: not written at all when the wallet has no identity (the request is a 404). */
  requireRegistered: boolean;
}

/** What the statement decided for a draft (decideChannels). */
export interface Decision {
  registered: boolean;
  channel: Channel | null;
  status: 'queued' | 'failed' | 'opted_out';
}

const COLUMNS = `id, protocol_id, environment, wallet, subject, body, category, priority, preferred_channel, channel, status,
  idempotency_key, payload_hash, template_id, template_version, template_variables, broadcast_id, schedule_id, last_error,
  write_receipt, receipt_status, receipt_failure_reason, receipt_requested_at, next_attempt_at, created_at, updated_at`;

/** The drafts, from the 19 column arrays of draftArrays ($1 … $19), as `r`, numbered from 1 in input order (`ord`). */
const DRAFTS = `unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                 $10::text[], $11::text[], $12::text[], $13::int[], $14::jsonb[], $15::text[], $16::text[], $17::boolean[],
                 $18::timestamptz[], $19::boolean[])
          WITH ORDINALITY AS r(id, protocol_id, environment, wallet, subject, body, category, priority, preferred_channel,
               idempotency_key, payload_hash, template_id, template_version, template_variables, broadcast_id, schedule_id,
               write_receipt, created_at, require_registered, ord)`;

/** The `decided` drafts (decideChannels over DRAFTS), written in input order; `where` narrows them further. */
const INSERT_DECIDED = (where = '') => `INSERT INTO notifications (${COLUMNS})
       SELECT id, protocol_id, environment, wallet, subject, body, category, priority, preferred_channel, channel, status,
              idempotency_key, payload_hash, template_id, template_version, template_variables, broadcast_id, schedule_id, last_error,
              write_receipt,
              CASE WHEN NOT write_receipt THEN 'disabled' WHEN status = 'queued' THEN 'pending' ELSE 'failed' END,
              -- A notification that will never be delivered can never get a receipt.
              CASE WHEN write_receipt AND status <> 'queued' THEN 'notification was not delivered (' || status || ')' END,
              CASE WHEN write_receipt THEN created_at END,
              CASE WHEN status = 'queued' THEN created_at END,
              created_at, created_at
       FROM decided
       WHERE (registered OR NOT require_registered)${where}
       ORDER BY ord`;

/** What the rows written give COUNT_NEW_NOTIFICATIONS (each one notification). */
const COUNTED_COLUMNS = 'protocol_id, environment, created_at, status, channel, broadcast_id, 1 AS n';

/** Each draft's decision, in input order. */
const DECISIONS = 'SELECT ord::int AS ord, registered, channel, status';

/** DRAFTS's 19 parameters: one binary array per column (db/binary-array.ts). */
function draftArrays(rows: DraftNotification[]): Buffer[] {
  const text = (pick: (row: DraftNotification) => string | null) => textArray(rows.map(pick));
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
    text((r) => r.idempotencyKey),
    text((r) => r.payloadHash),
    text((r) => r.templateId),
    int4Array(rows.map((r) => r.templateVersion)),
    jsonbArray(rows.map((r) => (r.templateVariables ? JSON.stringify(r.templateVariables) : null))),
    text((r) => r.broadcastId),
    text((r) => r.scheduleId),
    boolArray(rows.map((r) => r.writeReceipt)),
    timestamptzArray(rows.map((r) => r.createdAt)),
    boolArray(rows.map((r) => r.requireRegistered)),
  ];
}

const decision = (row: Decision): Decision => ({ registered: row.registered, channel: row.channel, status: row.status });

/**
 * The `want` and `reserve` CTEs: each group's sends (queued production rows of `decided`, for the
 * groups of groupParams, $20 … $22) reserved in protocol id order, with the limit in the WHERE so
 * a counter never passes its quota; `reserve` returns the protocols whose reservation fitted.
 * `after`, when given, is a subquery the reservation waits for (it runs first).
 */
const RESERVE_GROUPS = (after?: string) => `want AS (
         SELECT g.protocol_id, g.period_start, coalesce(n.count, 0)::int AS count, g.quota_limit, g.ord
         FROM unnest($20::text[], $21::date[], $22::int[]) WITH ORDINALITY AS g(protocol_id, period_start, quota_limit, ord)
         LEFT JOIN (
           SELECT protocol_id, count(*) AS count FROM decided WHERE status = 'queued' AND environment = 'production' GROUP BY protocol_id
         ) n ON n.protocol_id = g.protocol_id
       ), reserve AS (
         INSERT INTO usage_periods AS u (protocol_id, period_start, sends)
         SELECT protocol_id, period_start, count FROM want
         WHERE count > 0 AND (quota_limit IS NULL OR count <= quota_limit)${after ? ` AND (${after}) IS NOT NULL` : ''}
         ORDER BY ord
         ON CONFLICT (protocol_id, period_start) DO UPDATE SET sends = u.sends + EXCLUDED.sends
           WHERE u.sends + EXCLUDED.sends <= coalesce((SELECT w.quota_limit FROM want w WHERE w.protocol_id = u.protocol_id), 2147483647)
         RETURNING protocol_id
       )`;

/** insertNotifications: drafts with keys, a taken key skipped. */
const INSERT_KEYED = `WITH ${decideChannels(DRAFTS)}, inserted AS (
       ${INSERT_DECIDED()}
       ON CONFLICT (protocol_id, environment, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING id
     )
     ${DECISIONS}, id IN (SELECT id FROM inserted) AS inserted FROM decided ORDER BY ord`;

/** insertNotificationsReservingMany: write, reserve (the statement fails when a reservation does not fit), count. */
const INSERT_RESERVING = `WITH ${decideChannels(DRAFTS)}, inserted AS (
       ${INSERT_DECIDED()}
       RETURNING ${COUNTED_COLUMNS}
     ), ${RESERVE_GROUPS('SELECT count(*) FROM inserted')},
     ${COUNT_NEW_NOTIFICATIONS('inserted', 'SELECT count(*) FROM reserve')}, refused AS (
       SELECT herald_refuse_unreserved(count(*)) FROM want w WHERE w.count > 0 AND w.protocol_id NOT IN (SELECT protocol_id FROM reserve)
     )
     ${DECISIONS} FROM decided, refused ORDER BY ord`;

/** reserveFirstAnswers: reserve, then write and count the rows of the protocols whose reservation fitted. */
const RESERVE_FIRST = `WITH ${decideChannels(DRAFTS)}, ${RESERVE_GROUPS()}, allowed AS (
       SELECT protocol_id FROM want WHERE count = 0 UNION ALL SELECT protocol_id FROM reserve
     ), inserted AS (
       ${INSERT_DECIDED(' AND protocol_id IN (SELECT protocol_id FROM allowed)')}
       RETURNING ${COUNTED_COLUMNS}
     ), ${COUNT_NEW_NOTIFICATIONS('inserted')}
     ${DECISIONS}, protocol_id IN (SELECT protocol_id FROM allowed) AS allowed FROM decided ORDER BY ord`;

/**
 * Decides each draft's channel and writes it, in one statement. Drafts whose idempotency key is
 * already taken (by a committed row, a concurrent transaction that then commits, or an earlier
 * draft of the same call) are not written. Answers each draft's decision and whether it was written.
 * The caller reserves the quota, then counts the rows written (countNewNotifications), in its transaction.
 */
export async function insertNotifications(db: Queryable, drafts: DraftNotification[]): Promise<(Decision & { inserted: boolean })[]> {
  const rows = await db.query<Decision & { inserted: boolean }>(
    INSERT_KEYED,
    draftArrays(drafts),
  );
  return rows.map((row) => ({ ...decision(row), inserted: row.inserted }));
}

/** A request's drafts and whose quota they are reserved from, for insertNotificationsReservingMany. */
export interface ReservingInsert {
  rows: DraftNotification[];
  protocol: QuotaProtocol;
  now: Date;
}

/** Per request: whether its sends fitted the quota (and so its rows were written), and each draft's decision. */
export interface ReservingAnswer {
  reserved: boolean;
  decisions: Decision[];
}

/** The sends a request's decisions reserve: queued production notifications (sandbox sends are not billed). */
export const billable = (rows: DraftNotification[], decisions: Decision[]) =>
  decisions.filter((d, i) => d.status === 'queued' && rows[i].environment === 'production').length;

/**
 * Writes the drafts of several requests without idempotency keys (which are all written, but for
 * a single send's unregistered wallet) and reserves each request's sends, in one statement and so
 * one atomic step without a transaction around it: each draft's channel is decided
 * (decideChannels), the rows written, then each protocol's sends reserved together (protocols in
 * id order, so concurrent statements lock usage rows in the same order), then the rows counted for
 * reports. The usage rows stay locked only from the reservation to the commit, so concurrent
 * batches write their rows side by side. A reservation that does not fit fails the statement
 * (herald_refuse_unreserved), which undoes every row, and the batch is run again reserving first
 * (reserveFirst).
 */
export async function insertNotificationsReservingMany(db: Queryable, inserts: ReservingInsert[]): Promise<ReservingAnswer[]> {
  try {
    return await reservingInsert(db, inserts);
  } catch (error) {
    if (!alreadyWritten(error)) throw error;
    const answers = await answersOfWritten(db, inserts);
    if (!answers) throw error;
    return answers;
  }
}

async function reservingInsert(db: Queryable, inserts: ReservingInsert[]): Promise<ReservingAnswer[]> {
  const groups = reservationGroups(inserts);
  if (!groups) return oneByOne(db, inserts);
  const rows = inserts.flatMap((insert) => insert.rows);
  if (rows.some((row) => row.idempotencyKey !== null)) throw new Error('insertNotificationsReservingMany takes rows without idempotency keys');
  // A protocol refused this period is likely refused again: writing rows only to undo them would
  // make every batch it joins run twice.
  if (groups.some((group) => refusedIn.get(group.protocolId) === group.periodStart)) return reserveFirst(db, inserts, rows, groups);
  try {
    const decided = await db.query<Decision>(
      INSERT_RESERVING,
      [...draftArrays(rows), ...groupParams(groups)],
    );
    return answersFor(inserts, decided, () => true);
  } catch (error) {
    if ((error as { code?: unknown }).code !== QUOTA_REFUSED) throw error;
  }
  return reserveFirst(db, inserts, rows, groups);
}

/** A notification id written twice: PostgreSQL's unique_violation on the table's primary key. */
function alreadyWritten(error: unknown): boolean {
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  return code === '23505' && (constraint === 'notifications_pkey' || (typeof message === 'string' && message.includes('"notifications_pkey"')));
}

/**
 * The answers of drafts already written by an earlier run of the same statement, read back from
 * their rows; undefined unless every draft is there. A batch whose statement committed but whose
 * answer never arrived (the connection dropped in between) is run again call by call (Coalescer),
 * and its ids, made once per draft, are then taken by its own rows: those rows, their reservation
 * and their counting are that commit's, so each caller gets the answer the statement gave instead
 * of an error for a notification that is queued. The channel a row was written with never changes
 * (a fallback is recorded beside it), so the decision is read from it whatever happened since.
 */
async function answersOfWritten(db: Queryable, inserts: ReservingInsert[]): Promise<ReservingAnswer[] | undefined> {
  const ids = inserts.flatMap((insert) => insert.rows.map((row) => row.id));
  const rows = await db.query<{ id: string; protocol_id: string; channel: Channel | null; status: NotificationStatus; last_error: string | null }>(
    'SELECT id, protocol_id, channel, status, last_error FROM notifications WHERE id = ANY($1::text[])',
    [ids],
  );
  const written = new Map(rows.map((row) => [row.id, row]));
  const decisions = inserts.map((insert) =>
    insert.rows.map((draft): Decision | undefined => {
      const row = written.get(draft.id);
      if (!row || row.protocol_id !== draft.protocolId) return undefined;
      return {
        registered: row.last_error !== NO_CHANNEL.unregistered,
        channel: row.channel,
        status: row.status === 'opted_out' ? 'opted_out' : row.channel === null ? 'failed' : 'queued',
      };
    }),
  );
  if (decisions.some((request) => request.some((decision) => decision === undefined))) return undefined;
  return decisions.map((request) => ({ reserved: true, decisions: request as Decision[] }));
}

/** The statement's decisions (one per draft, in order) split back into its requests' answers. */
function answersFor<D extends Decision>(inserts: ReservingInsert[], decided: D[], reserved: (rows: D[]) => boolean): ReservingAnswer[] {
  let at = 0;
  return inserts.map((insert) => {
    const rows = decided.slice(at, (at += insert.rows.length));
    return { reserved: reserved(rows), decisions: rows.map(decision) };
  });
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
  requests: number[];
}

/** The requests grouped by protocol, in protocol id order; undefined when a batch spans two periods. */
function reservationGroups(inserts: ReservingInsert[]): ReservationGroup[] | undefined {
  const byProtocol = new Map<string, ReservationGroup>();
  for (const [i, insert] of inserts.entries()) {
    const [, periodStart, , quotaLimit] = reservationParams({ protocol: insert.protocol, now: insert.now, count: 0 });
    const group = byProtocol.get(insert.protocol.id);
    if (!group) byProtocol.set(insert.protocol.id, { protocolId: insert.protocol.id, periodStart, quotaLimit, requests: [i] });
    else {
      // A batch across a month boundary: the two periods are separate counters.
      if (group.periodStart !== periodStart) return undefined;
      group.requests.push(i);
    }
  }
  return [...byProtocol.values()].sort((a, b) => (a.protocolId < b.protocolId ? -1 : a.protocolId > b.protocolId ? 1 : 0));
}

const groupParams = (groups: ReservationGroup[]) => [
  groups.map((group) => group.protocolId),
  groups.map((group) => group.periodStart),
  groups.map((group) => group.quotaLimit),
];

/**
 * The batch when a reservation did not fit: each protocol's sends reserved first, and the rows
 * written only for the protocols whose reservation fitted. When a protocol's requests do not fit
 * together, each is tried again on its own, in order, so every request gets the answer it would
 * have had alone.
 */
async function reserveFirst(db: Queryable, inserts: ReservingInsert[], rows: DraftNotification[], groups: ReservationGroup[]): Promise<ReservingAnswer[]> {
  const answers = await reserveFirstAnswers(db, inserts, rows, groups);
  for (const group of groups) {
    const wanted = group.requests.some((i) => billable(inserts[i].rows, answers[i].decisions) > 0);
    if (!wanted || group.requests.some((i) => answers[i].reserved)) refusedIn.delete(group.protocolId);
    else refusedIn.set(group.protocolId, group.periodStart);
  }
  return answers;
}

async function reserveFirstAnswers(
  db: Queryable,
  inserts: ReservingInsert[],
  rows: DraftNotification[],
  groups: ReservationGroup[],
): Promise<ReservingAnswer[]> {
  const decided = await db.query<Decision & { allowed: boolean }>(
    RESERVE_FIRST,
    [...draftArrays(rows), ...groupParams(groups)],
  );
  // A request's rows all have its protocol's answer.
  const answers = answersFor(inserts, decided, (rows) => rows[0].allowed);
  for (const group of groups) {
    if (answers[group.requests[0]].reserved || group.requests.length === 1) continue;
    // Too many together for what is left: each request on its own, first come first served.
    const alone = await oneByOne(db, group.requests.map((i) => inserts[i]));
    group.requests.forEach((i, k) => (answers[i] = alone[k]));
  }
  return answers;
}

async function oneByOne(db: Queryable, inserts: ReservingInsert[]): Promise<ReservingAnswer[]> {
  const answers: ReservingAnswer[] = [];
  for (const insert of inserts) answers.push(...(await reserveFirstAnswers(db, [insert], insert.rows, reservationGroups([insert])!)));
  return answers;
}

/**
 * The send path's statement for requests without idempotency keys (the deciding, reserving
 * insert), run for many concurrent requests at once (see Coalescer): under load one statement and
 * one commit serve a whole batch of requests instead of one each.
 */
export type SendBatch = Coalescer<ReservingInsert, ReservingAnswer>;

const sendBatches = new WeakMap<Queryable, SendBatch>();

/** The send batch of a database (one per database handle). */
export function sendBatchFor(db: Queryable): SendBatch {
  let batch = sendBatches.get(db);
  if (!batch) {
    // PGlite runs one statement at a time: a second batch in flight would only wait for the first.
    const parallel = (db as Partial<Database>).engine === 'postgres';
    batch = new Coalescer((inserts) => insertNotificationsReservingMany(db, inserts), {
      maxInFlight: parallel ? 2 : 1,
      maxBatch: 200,
      extraBatchWeight: ROWS_FOR_A_SECOND_INSERT,
      weigh: (insert) => insert.rows.length,
    });
    sendBatches.set(db, batch);
  }
  return batch;
}

/**
 * Batches run one at a time, and a batch gathers every request that came while the previous one
 * ran. For single sends a second batch in flight only halved the batches, so each request paid
 * twice the statement's fixed cost (executor set-up, trigger, commit): about 30% more PostgreSQL
 * time per send, and a higher p99.
 *
 * The exception is once this many rows wait (a few bulk requests; single sends never queue that
 * many): writing the rows is then most of a statement's time, and it no longer holds the usage
 * rows while it writes (insertNotificationsReservingMany), so a second insert runs beside the
 * first instead of waiting for it.
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
  environment: DraftNotification['environment'],
  keys: string[],
): Promise<Map<string, IdempotentOriginal>> {
  if (keys.length === 0) return new Map();
  const rows = await db.query<IdempotentOriginal>(
    'SELECT id, idempotency_key, payload_hash FROM notifications WHERE protocol_id = $1 AND environment = $2 AND idempotency_key = ANY($3::text[])',
    [protocolId, environment, keys],
  );
  return new Map(rows.map((r) => [r.idempotency_key, r]));
}

/** The wallets among `wallets` that have an identity. */
export async function registeredWallets(db: Queryable, wallets: string[]): Promise<Set<string>> {
  const rows = await db.query<{ wallet: string }>('SELECT wallet FROM identities WHERE wallet = ANY($1::text[])', [[...new Set(wallets)]]);
  return new Set(rows.map((row) => row.wallet));
}
