import type { Environment } from '../auth/api-keys.js';
import type { Channel, SendOutcome } from '../channels/provider.js';
import { storableText } from '../db/storable-text.js';
import { notificationEventData, type NotificationEventType } from '../webhooks/event-payloads.js';
import { nextAttemptAt, type RetryPolicy } from './retry-policy.js';

/** A claimed notification as the worker sees it. */
export interface ClaimedNotification {
  id: string;
  protocol_id: string;
  wallet: string;
  priority: string;
  channel: Channel;
  fallback_channel: Channel | null;
  /** Attempts including the one just claimed; with fallback_channel, the claim's fencing token. */
  attempts: number;
  environment: Environment;
}

export interface Settlement {
  id: string;
  /** The claim's fencing token: its attempt counter and the fallback it was made under. */
  token: number;
  claimedFallback: Channel | null;
  status: 'queued' | 'delivered' | 'bounced' | 'failed' | 'opted_out';
  attempts: number;
  fallbackChannel: Channel | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  lastError: string | null;
  /** The attempt made; null when none was (an opt-out found before sending). */
  attempt: { attempt: number; channel: Channel; provider: string; outcome: string; providerResponse: string | null; error: string | null; durationMs: number } | null;
  event: { type: NotificationEventType; data: Record<string, unknown> } | null;
  /** A Telegram chat or phone number its provider refused for good: no longer a verified channel of the wallet. */
  unreachableContact?: UnreachableContact;
}

export interface UnreachableContact {
  wallet: string;
  channel: 'telegram' | 'sms';
  /** The contact as stored when it was sent to: a contact changed since is left alone. */
  sealed: string;
}

/**
 * What a send outcome does to the notification (pure). Transient errors are retried by the policy;
 * permanent failures, bounces and exhausted retries are final, except that a `critical` message
 * whose channel gave up falls back once to SMS when the wallet has a verified phone.
 */
export function settle(
  n: ClaimedNotification,
  answer: SendOutcome,
  ctx: { provider: string; durationMs: number; now: Date; policy: RetryPolicy; hasPhone: boolean; random?: number },
): Settlement {
  const outcome = storableOutcome(answer);
  const channel = n.fallback_channel ?? n.channel;
  const base = {
    ...claimOf(n),
    attempt: {
      attempt: n.attempts,
      channel,
      provider: ctx.provider,
      outcome: outcome.kind,
      providerResponse: outcome.providerResponse?.slice(0, 1000) ?? null,
      error: outcome.kind === 'delivered' ? null : outcome.error.slice(0, 1000),
      durationMs: Math.round(ctx.durationMs),
    },
  };
  if (outcome.kind === 'delivered') {
    return {
      ...base,
      status: 'delivered',
      deliveredAt: ctx.now,
      lastError: null,
      event: {
        type: 'notification.delivered',
        data: notificationEventData('notification.delivered', { notificationId: n.id, wallet: n.wallet, channel, deliveredAt: ctx.now, environment: n.environment }),
      },
    };
  }
  if (outcome.kind === 'retry') {
    const next = nextAttemptAt(ctx.policy, n.attempts, ctx.now, outcome.retryAfterMs, ctx.random);
    if (next) return { ...base, status: 'queued', nextAttemptAt: next, lastError: outcome.error, event: null };
  }
  // Retries run out on a recipient the server kept deferring: a soft bounce, a bounce all the same.
  const finalStatus = outcome.kind === 'bounced' || (outcome.kind === 'retry' && outcome.softBounce) ? 'bounced' : 'failed';
  // The last attempt of exhausted retries reads as what it ended in, not as a retry that never came.
  if (outcome.kind === 'retry') base.attempt.outcome = finalStatus;
  if (n.priority === 'critical' && channel !== 'sms' && !n.fallback_channel && ctx.hasPhone) {
    return {
      ...base,
      status: 'queued',
      attempts: 0,
      fallbackChannel: 'sms',
      nextAttemptAt: ctx.now,
      lastError: `${channel} ${finalStatus}: ${outcome.error}; falling back to sms`,
      event: null,
    };
  }
  const reason = outcome.kind === 'retry' ? `gave up after ${n.attempts} attempts: ${outcome.error}` : outcome.error;
  const type = finalStatus === 'bounced' ? 'notification.bounced' : 'notification.failed';
  return {
    ...base,
    status: finalStatus,
    lastError: reason,
    event: { type, data: notificationEventData(type, { notificationId: n.id, wallet: n.wallet, channel, reason, attempts: n.attempts, environment: n.environment }) },
  };
}

/**
 * A queued message whose wallet opted out of the protocol's messages before it was sent: it ends
 * `opted_out`, as the send would have answered after the opt-out. No provider is asked, so no
 * attempt is recorded (the claim's is given back), and no event is written, as for a send answered
 * `opted_out`.
 */
export function optedOut(n: ClaimedNotification, reason: string): Settlement {
  return { ...claimOf(n), status: 'opted_out', attempts: n.attempts - 1, lastError: reason, attempt: null, event: null };
}

/** What every settlement of claim `n` starts from: its fence, its counters, no next attempt, not delivered. */
function claimOf(n: ClaimedNotification) {
  return {
    id: n.id,
    token: n.attempts,
    claimedFallback: n.fallback_channel,
    attempts: n.attempts,
    fallbackChannel: n.fallback_channel,
    nextAttemptAt: null,
    deliveredAt: null,
  };
}

/** The outcome with the provider's texts as the database can store them (storableText). */
function storableOutcome(outcome: SendOutcome): SendOutcome {
  if (outcome.kind === 'delivered') return { ...outcome, providerResponse: storableText(outcome.providerResponse) };
  const providerResponse = outcome.providerResponse === undefined ? {} : { providerResponse: storableText(outcome.providerResponse) };
  return { ...outcome, error: storableText(outcome.error), ...providerResponse };
}
