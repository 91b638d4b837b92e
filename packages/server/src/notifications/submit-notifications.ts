import type { ProtocolRow } from '../account/protocol-store.js';
import type { Channel } from '../channels/provider.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { checkContent } from './check-content.js';
import { walletNotRegistered } from '../wallet.js';
import { newId } from '../ids.js';
import { QuotaRefused, quotaRefusal, reserveSends } from '../limits/quota.js';
import { recordQuotaExceeded } from '../limits/record-quota-exceeded.js';
import { countNewNotifications } from '../reporting/notification-counts.js';
import { resolveSendTemplates } from '../templates/resolve-send-templates.js';
import { tierOf } from '../tiers.js';
import {
  billable,
  findByIdempotencyKeys,
  insertNotifications,
  registeredWallets,
  sendBatchFor,
  type Decision,
  type DraftNotification,
  type IdempotentOriginal,
} from './notification-store.js';
import { payloadHash, samePayload } from './payload-hash.js';
import type { NotifyInput } from './schemas.js';

export interface Sender {
  protocol: Pick<ProtocolRow, 'id' | 'tier' | 'overage_enabled'>;
  environment: 'production' | 'sandbox';
}

export interface Submission {
  notificationId: string;
  status: 'queued' | 'opted_out' | 'duplicate' | 'failed';
  recipientRegistered: boolean;
  estimatedDeliveryMs: number | null;
  deliveryChannel: Channel | null;
}

export interface SubmitOptions {
  /** `single`: an unregistered wallet is a 404; `bulk`: that item is `failed`. */
  mode: 'single' | 'bulk';
  scheduleId?: string;
  broadcastId?: string;
}

const fieldName = (mode: SubmitOptions['mode'], index: number, field: string) =>
  mode === 'single' ? field : `notifications[${index}].${field}`;

/**
 * Checks that need the tier or the database, before anything is written: the content (body size
 * for the tier, nothing blank), and each template's tier gate, existence and variables. Schedules run it at creation too.
 * Returns the current version of each template used.
 */
export async function checkItems(deps: Deps, sender: Sender, items: NotifyInput[], mode: SubmitOptions['mode']) {
  items.forEach((item, i) => checkContent(sender.protocol.tier, item, (field) => fieldName(mode, i, field)));
  // Tier, existence and every placeholder's variable, checked now rather than by the worker.
  const templates = await resolveSendTemplates(deps.db, sender.protocol, items, (i, field) => fieldName(mode, i, field));
  return new Map([...templates].map(([id, template]) => [id, template.version]));
}

/** The rows a request asks for, as the store takes them (notification-store DraftNotification). */
function draftsFor(sender: Sender, items: NotifyInput[], versions: Map<string, number>, options: SubmitOptions, now: Date): DraftNotification[] {
  return items.map(
    (item): DraftNotification => ({
      id: newId.notification(),
      protocolId: sender.protocol.id,
      environment: sender.environment,
      wallet: item.wallet,
      subject: item.subject,
      body: item.body,
      category: item.category,
      priority: item.priority ?? 'normal',
      preferredChannel: item.preferredChannel ?? null,
      idempotencyKey: item.idempotencyKey ?? null,
      // Only a key's reuse is ever compared with the payload it was first sent with.
      payloadHash: item.idempotencyKey === undefined ? null : payloadHash(item),
      templateId: item.templateId ?? null,
      templateVersion: item.templateId ? versions.get(item.templateId)! : null,
      templateVariables: item.templateVariables ?? null,
      broadcastId: options.broadcastId ?? null,
      scheduleId: options.scheduleId ?? null,
      writeReceipt: item.receipt ?? false,
      createdAt: now,
      requireRegistered: options.mode === 'single',
    }),
  );
}

/** Answers for the rows written, in order: each estimate counts the request's earlier rows on its channel. */
function answerer(deps: Deps) {
  const ahead = new Map<Channel, number>();
  return (draft: DraftNotification, decision: Decision): Submission => {
    let estimatedDeliveryMs = null;
    if (decision.channel) {
      const before = ahead.get(decision.channel) ?? 0;
      ahead.set(decision.channel, before + 1);
      estimatedDeliveryMs = deps.estimator.estimate(decision.channel, before);
    }
    return {
      notificationId: draft.id,
      status: decision.status,
      recipientRegistered: decision.registered,
      estimatedDeliveryMs,
      deliveryChannel: decision.channel,
    };
  };
}

/**
 * Without idempotency keys every row is written: the channel choice, the rows and their
 * reservation go in one statement, atomic on its own (1 round trip instead of a transaction's 5),
 * shared with other requests made at the same time (sendBatchFor).
 */
async function submitUnkeyed(deps: Deps, sender: Sender, drafts: DraftNotification[], mode: SubmitOptions['mode'], now: Date): Promise<Submission[]> {
  const { reserved, decisions } = await sendBatchFor(deps.db).call({ rows: drafts, protocol: sender.protocol, now });
  if (mode === 'single' && !decisions[0].registered) throw walletNotRegistered(drafts[0].wallet);
  if (!reserved) throw new QuotaRefused(billable(drafts, decisions));
  const answer = answerer(deps);
  return drafts.map((draft, i) => answer(draft, decisions[i]));
}

/**
 * With idempotency keys, in one transaction: the rows whose key is free are written, the others
 * answer for the notification that holds the key (`duplicate`, or 409 for another payload), then
 * the quota is reserved and the new rows counted.
 */
async function submitKeyed(
  deps: Deps,
  sender: Sender,
  items: NotifyInput[],
  drafts: DraftNotification[],
  mode: SubmitOptions['mode'],
  now: Date,
): Promise<Submission[]> {
  /** The answer for item i, whose key is already taken by `original`. */
  const duplicateOf = (original: IdempotentOriginal, i: number, registered: boolean): Submission => {
    if (!samePayload(original.payload_hash, items[i], drafts[i].payloadHash!)) {
      const key = `${fieldName(mode, i, 'idempotencyKey')} "${original.idempotency_key}"`;
      // An earlier item of this request: its row is undone with the request, so name the item.
      const earlier = drafts.findIndex((other) => other.id === original.id);
      throw new ApiError(
        'DUPLICATE_IDEMPOTENCY_KEY',
        earlier === -1
          ? `${key} was already used for notification ${original.id} with a different payload`
          : `${key} repeats ${fieldName(mode, earlier, 'idempotencyKey')} with a different payload`,
      );
    }
    return { notificationId: original.id, status: 'duplicate', recipientRegistered: registered, estimatedDeliveryMs: null, deliveryChannel: null };
  };
  return deps.db.transaction(async (tx) => {
    const written = await insertNotifications(tx, drafts);
    const skippedKeys = drafts.filter((_, i) => !written[i].inserted).map((draft) => draft.idempotencyKey!);
    const originals = await findByIdempotencyKeys(tx, sender.protocol.id, sender.environment, skippedKeys);
    if (mode === 'single' && !written[0].registered) {
      // A retry of a send whose wallet has since been erased still answers for that send.
      const original = originals.get(drafts[0].idempotencyKey!);
      if (original) return [duplicateOf(original, 0, false)];
      throw walletNotRegistered(drafts[0].wallet);
    }
    const answer = answerer(deps);
    const out = drafts.map((draft, i): Submission => {
      if (written[i].inserted) return answer(draft, written[i]);
      return duplicateOf(originals.get(draft.idempotencyKey!)!, i, written[i].registered);
    });
    const fresh = drafts.filter((_, i) => written[i].inserted);
    const decided = written.filter((row) => row.inserted);
    const needed = billable(fresh, decided);
    if (!(await reserveSends(tx, sender.protocol, needed, now))) throw new QuotaRefused(needed);
    await countNewNotifications(
      tx,
      fresh.map((draft, i) => ({ ...draft, status: decided[i].status, channel: decided[i].channel, count: 1 })),
    );
    return out;
  });
}

/**
 * The answers to a retry of a request accepted before, when checks made now refuse it (its
 * template was changed or deleted since, or the protocol's tier went down): every item carries a
 * key that already holds a notification sent with the same payload. Those sends happened, and the
 * client needs to know it, so each item answers `duplicate` with the original id, as it would
 * have before the change. Undefined when any item is new or differs, and the refusal stands.
 */
async function replayOfAccepted(deps: Deps, sender: Sender, items: NotifyInput[]): Promise<Submission[] | undefined> {
  if (!items.every((item) => item.idempotencyKey !== undefined)) return undefined;
  const keys = items.map((item) => item.idempotencyKey!);
  const originals = await findByIdempotencyKeys(deps.db, sender.protocol.id, sender.environment, keys);
  const held = items.map((item) => {
    const original = originals.get(item.idempotencyKey!);
    return original && samePayload(original.payload_hash, item, payloadHash(item)) ? original : undefined;
  });
  if (held.some((original) => original === undefined)) return undefined;
  const registered = await registeredWallets(deps.db, items.map((item) => item.wallet));
  return items.map((item, i) => ({
    notificationId: held[i]!.id,
    status: 'duplicate',
    recipientRegistered: registered.has(item.wallet),
    estimatedDeliveryMs: null,
    deliveryChannel: null,
  }));
}

/**
 * Accepts notifications: picks each one's channel (DESIGN §6, decideChannels), writes the rows,
 * their quota reservation and their job state in one transaction, and answers one result per item
 * in input order. Idempotency: a key already used with the same payload answers `duplicate` with the
 * original id; with a different payload the request fails with 409.
 */
export async function submitNotifications(deps: Deps, sender: Sender, items: NotifyInput[], options: SubmitOptions): Promise<Submission[]> {
  let versions: Map<string, number>;
  try {
    versions = await checkItems(deps, sender, items, options.mode);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const replay = await replayOfAccepted(deps, sender, items);
    if (!replay) throw error;
    return replay;
  }
  const now = deps.now();
  const drafts = draftsFor(sender, items, versions, options, now);
  let results: Submission[];
  try {
    results = drafts.every((draft) => draft.idempotencyKey === null)
      ? await submitUnkeyed(deps, sender, drafts, options.mode, now)
      : await submitKeyed(deps, sender, items, drafts, options.mode, now);
  } catch (error) {
    if (!(error instanceof QuotaRefused)) throw error;
    await recordQuotaExceeded(deps.db, sender.protocol, now, error.needed);
    const limit = tierOf(sender.protocol.tier).monthlySends;
    throw new ApiError('INSUFFICIENT_QUOTA', quotaRefusal(limit, error.needed, 'request'));
  }
  if (results.some((result) => result.status === 'queued')) deps.wakeup.notify('notifications');
  return results;
}
