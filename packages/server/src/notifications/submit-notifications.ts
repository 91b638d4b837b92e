import type { ProtocolRow } from '../account/protocol-store.js';
import type { Channel } from '../channels/provider.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { newId } from '../ids.js';
import { QuotaRefused, quotaRefusal, reserveSends } from '../limits/quota.js';
import { recordQuotaExceeded } from '../limits/record-quota-exceeded.js';
import { resolveSendTemplates } from '../templates/resolve-send-templates.js';
import { tierOf } from '../tiers.js';
import { chooseChannel } from './choose-channel.js';
import { findByIdempotencyKeys, insertNotifications, loadReachability, sendBatchesFor, type IdempotentOriginal, type NewNotification } from './notification-store.js';
import type { Reachability } from './choose-channel.js';
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
 * Checks that need the tier or the database, before anything is written: body size for the tier,
 * and each template's tier gate, existence and variables. Schedules run it at creation too.
 * Returns the current version of each template used.
 */
export async function checkItems(deps: Deps, sender: Sender, items: NotifyInput[], mode: SubmitOptions['mode']) {
  const tier = tierOf(sender.protocol.tier);
  items.forEach((item, i) => {
    const size = Buffer.byteLength(item.body, 'utf8');
    if (size > tier.maxBodyBytes) {
      throw new ApiError('VALIDATION_ERROR', `${fieldName(mode, i, 'body')} is ${size} bytes; the ${tier.name} tier allows ${tier.maxBodyBytes}`);
    }
  });
  // Tier, existence and every placeholder's variable, checked now rather than by the worker.
  const templates = await resolveSendTemplates(deps.db, sender.protocol, items, (i, field) => fieldName(mode, i, field));
  return new Map([...templates].map(([id, template]) => [id, template.version]));
}

/**
 * Accepts notifications: picks each one's channel (DESIGN §6), writes the rows, their quota
 * reservation and their job state in one transaction, and answers one result per item in input
 * order. Idempotency: a key already used with the same payload answers `duplicate` with the
 * original id; with a different payload the request fails with 409.
 */
export async function submitNotifications(deps: Deps, sender: Sender, items: NotifyInput[], options: SubmitOptions): Promise<Submission[]> {
  const versions = await checkItems(deps, sender, items, options.mode);
  const protocolId = sender.protocol.id;
  const now = deps.now();
  // Only a key's reuse is ever compared with the payload it was first sent with.
  const hashes = items.map((item) => (item.idempotencyKey === undefined ? null : payloadHash(item)));

  const buildRows = (reach: Map<string, Reachability>) =>
    items.map((item, i): NewNotification & { registered: boolean } => {
      const recipient = reach.get(item.wallet);
      if (!recipient && options.mode === 'single') {
        throw new ApiError('WALLET_NOT_REGISTERED', `Wallet ${item.wallet} has no identity with Herald`);
      }
      const choice = recipient ? chooseChannel(recipient, item.preferredChannel) : { outcome: 'failed' as const, reason: 'wallet not registered' };
      const status = choice.outcome;
      const writeReceipt = item.receipt ?? false;
      return {
        registered: Boolean(recipient),
        id: newId.notification(),
        protocolId,
        environment: sender.environment,
        wallet: item.wallet,
        subject: item.subject,
        body: item.body,
        category: item.category,
        priority: item.priority ?? 'normal',
        preferredChannel: item.preferredChannel ?? null,
        channel: choice.outcome === 'queued' ? choice.channel : null,
        status,
        idempotencyKey: item.idempotencyKey ?? null,
        payloadHash: hashes[i],
        templateId: item.templateId ?? null,
        templateVersion: item.templateId ? versions.get(item.templateId)! : null,
        templateVariables: item.templateVariables ?? null,
        broadcastId: options.broadcastId ?? null,
        scheduleId: options.scheduleId ?? null,
        lastError: choice.outcome === 'failed' ? choice.reason : null,
        writeReceipt,
        // A notification that will never be delivered can never get a receipt.
        receiptStatus: !writeReceipt ? 'disabled' : status === 'queued' ? 'pending' : 'failed',
        receiptFailureReason: writeReceipt && status !== 'queued' ? `notification was not delivered (${status})` : null,
        createdAt: now,
      };
    });
  /** Answers for the rows written, in order: each estimate counts the request's earlier rows on its channel. */
  const accepted = () => {
    const ahead = new Map<Channel, number>();
    return (row: NewNotification & { registered: boolean }): Submission => {
      let estimatedDeliveryMs = null;
      if (row.channel) {
        const before = ahead.get(row.channel) ?? 0;
        ahead.set(row.channel, before + 1);
        estimatedDeliveryMs = deps.estimator.estimate(row.channel, before);
      }
      return { notificationId: row.id, status: row.status, recipientRegistered: row.registered, estimatedDeliveryMs, deliveryChannel: row.channel };
    };
  };
  // Sandbox sends run the whole pipeline but are not billed.
  const billable = (rows: NewNotification[]) => (sender.environment === 'production' ? rows.filter((row) => row.status === 'queued').length : 0);
  const wallets = [...new Set(items.map((item) => item.wallet))];

  let results: Submission[];
  try {
    if (items.every((item) => item.idempotencyKey === undefined)) {
      // Without idempotency keys every row is written: the rows and their reservation go in one
      // statement, atomic on its own (2 round trips instead of a transaction's 5). Reachability
      // is read just before, as the transaction below reads it at its start. Both statements
      // are shared with other requests made at the same time (sendBatchesFor).
      const batches = sendBatchesFor(deps.db);
      const rows = buildRows(await batches.reachability.call({ protocolId, wallets }));
      const reserved = await batches.insert.call({ rows, reservation: { protocol: sender.protocol, count: billable(rows), now } });
      if (!reserved) throw new QuotaRefused(billable(rows));
      results = rows.map(accepted());
    } else {
      /** The answer for item i, whose key is already taken by `original`; `rows`, this request's rows, when built. */
      const duplicateOf = (original: IdempotentOriginal, i: number, registered: boolean, rows: NewNotification[] = []): Submission => {
        if (!samePayload(original.payload_hash, items[i], hashes[i]!)) {
          const key = `${fieldName(options.mode, i, 'idempotencyKey')} "${original.idempotency_key}"`;
          // An earlier item of this request: its row is undone with the request, so name the item.
          const earlier = rows.findIndex((other) => other.id === original.id);
          throw new ApiError(
            'DUPLICATE_IDEMPOTENCY_KEY',
            earlier === -1
              ? `${key} was already used for notification ${original.id} with a different payload`
              : `${key} repeats ${fieldName(options.mode, earlier, 'idempotencyKey')} with a different payload`,
          );
        }
        return { notificationId: original.id, status: 'duplicate', recipientRegistered: registered, estimatedDeliveryMs: null, deliveryChannel: null };
      };
      results = await deps.db.transaction(async (tx) => {
        const reach = await loadReachability(tx, protocolId, wallets);
        const [first] = items;
        if (options.mode === 'single' && !reach.has(first.wallet)) {
          // A retry of a send whose wallet has since been erased still answers for that send.
          const original = (await findByIdempotencyKeys(tx, protocolId, sender.environment, [first.idempotencyKey!])).get(first.idempotencyKey!);
          if (original) return [duplicateOf(original, 0, false)];
        }
        const rows = buildRows(reach);
        const inserted = await insertNotifications(tx, rows);
        const skippedKeys = rows.filter((row) => !inserted.has(row.id)).map((row) => row.idempotencyKey!);
        const originals = await findByIdempotencyKeys(tx, protocolId, sender.environment, skippedKeys);

        const answer = accepted();
        const out = rows.map((row, i): Submission => {
          if (inserted.has(row.id)) return answer(row);
          return duplicateOf(originals.get(row.idempotencyKey!)!, i, row.registered, rows);
        });

        const fresh = rows.filter((row) => inserted.has(row.id));
        const needed = billable(fresh);
        if (!(await reserveSends(tx, sender.protocol, needed, now))) throw new QuotaRefused(needed);
        return out;
      });
    }
  } catch (error) {
    if (!(error instanceof QuotaRefused)) throw error;
    await recordQuotaExceeded(deps.db, sender.protocol, now);
    const limit = tierOf(sender.protocol.tier).monthlySends;
    throw new ApiError('INSUFFICIENT_QUOTA', quotaRefusal(limit, error.needed, 'request'));
  }
  if (results.some((result) => result.status === 'queued')) deps.wakeup.notify('notifications');
  return results;
}
