import { createHash } from 'node:crypto';
import type { ProtocolRow } from '../account/protocol-store.js';
import type { Channel } from '../channels/provider.js';
import type { Deps } from '../deps.js';
import { answeredBefore, createOnce, type CreationKey, type Keyed } from '../creation-keys/creation-key.js';
import { ApiError } from '../http/errors.js';
import { checkContent } from '../notifications/check-content.js';
import { newId } from '../ids.js';
import { QuotaRefused, quotaRefusal, reserveSends } from '../limits/quota.js';
import { recordQuotaExceeded } from '../limits/record-quota-exceeded.js';
import { countNewNotifications } from '../reporting/notification-counts.js';
import { resolveSendTemplates } from '../templates/resolve-send-templates.js';
import { tierOf } from '../tiers.js';
import { broadcastIdPrefix } from './fan-out-ids.js';
import { fanOutBroadcast, insertBroadcast } from './broadcast-store.js';

export interface BroadcastInput {
  subject: string;
  body: string;
  category: string;
  receipt?: boolean;
  templateId?: string;
  templateVariables?: Record<string, unknown>;
}

export interface BroadcastResult {
  broadcast_id: string;
  queued_count: number;
  total_subscribers: number;
  estimated_delivery_s: number;
}

function checkInput(protocol: Pick<ProtocolRow, 'tier'>, input: BroadcastInput): void {
  if (protocol.tier < 1) throw new ApiError('TIER_REQUIRED', 'Broadcast needs the Growth tier (1) or above');
  checkContent(protocol.tier, input);
}

/**
 * Sends one message to every active subscriber of the protocol. The fan-out, the quota
 * reservation for every queued message, the broadcast record and the request's idempotency key
 * (when given) commit together or not at all: a broadcast that does not fit the month's quota
 * writes nothing and answers 402. A request repeating a key gets the first answer (`replayed`).
 */
export async function sendBroadcast(
  deps: Deps,
  sender: { protocol: Pick<ProtocolRow, 'id' | 'tier' | 'overage_enabled'>; environment: 'production' | 'sandbox' },
  input: BroadcastInput,
  key?: CreationKey,
): Promise<Keyed<BroadcastResult>> {
  const before = await answeredBefore<BroadcastResult>(deps.db, key);
  if (before) return { answer: before, replayed: true };
  const { protocol, environment } = sender;
  checkInput(protocol, input);
  const templates = await resolveSendTemplates(deps.db, protocol, [input], (_i, field) => field);
  const template = input.templateId ? templates.get(input.templateId)! : undefined;
  const now = deps.now();
  const broadcastId = newId.broadcast();
  const receipt = input.receipt ?? false;
  const payloadHash = createHash('sha256')
    .update(JSON.stringify([broadcastId, input.subject, input.body, input.category, receipt, input.templateId ?? null, input.templateVariables ?? null]))
    .digest('hex');

  let created: Keyed<BroadcastResult>;
  try {
    created = await createOnce(deps.db, key, now, async (tx) => {
      const rows = await fanOutBroadcast(tx, {
        protocolId: protocol.id,
        environment,
        broadcastId,
        idPrefix: broadcastIdPrefix(now),
        subject: input.subject,
        body: input.body,
        category: input.category,
        payloadHash,
        templateId: template?.templateId ?? null,
        templateVersion: template?.version ?? null,
        templateVariables: template ? (input.templateVariables ?? {}) : null,
        writeReceipt: receipt,
        now,
      });
      const queued = rows.reduce((sum, r) => sum + (r.channel ? r.count : 0), 0);
      // Sandbox sends run the whole pipeline but are not billed (as for direct sends).
      const needed = environment === 'production' ? queued : 0;
      if (!(await reserveSends(tx, protocol, needed, now))) throw new QuotaRefused(needed);
      await countNewNotifications(
        tx,
        rows.map((r) => ({ protocolId: protocol.id, environment, createdAt: now, status: r.channel ? 'queued' : 'failed', channel: r.channel, broadcastId, count: r.count })),
      );
      const totalSubscribers = rows.reduce((sum, r) => sum + r.count, 0);
      await insertBroadcast(tx, {
        id: broadcastId,
        protocol_id: protocol.id,
        environment,
        subject: input.subject,
        body: input.body,
        category: input.category,
        write_receipt: receipt,
        template_id: template?.templateId ?? null,
        template_version: template?.version ?? null,
        total_subscribers: totalSubscribers,
        queued_count: queued,
        now,
      });
      const counts: Partial<Record<Channel, number>> = {};
      for (const row of rows) if (row.channel) counts[row.channel] = row.count;
      return {
        broadcast_id: broadcastId,
        queued_count: queued,
        total_subscribers: totalSubscribers,
        // In-memory (its sampling query is not awaited here, so it cannot wait on this transaction).
        estimated_delivery_s: queued > 0 ? deps.estimator.estimateBulkSeconds(counts) : 0,
      };
    });
  } catch (error) {
    if (!(error instanceof QuotaRefused)) throw error;
    await recordQuotaExceeded(deps.db, protocol, now, error.needed);
    throw new ApiError('INSUFFICIENT_QUOTA', quotaRefusal(tierOf(protocol.tier).monthlySends, error.needed, 'broadcast'));
  }

  if (!created.replayed && created.answer.queued_count > 0) deps.wakeup.notify('notifications');
  return created;
}
