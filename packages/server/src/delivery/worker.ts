import { insertCaptured, type CapturedMessage } from '../channels/capture.js';
import type { Channel, SendOutcome } from '../channels/provider.js';
import type { Deps } from '../deps.js';
import { TrackingLinks } from '../engagement/tracking-links.js';
import { JobLoop } from '../jobs/loop.js';
import { tableStatistics } from '../db/table-statistics.js';
import { composeMessage, contactFor } from './compose-message.js';
import { claimNotifications, commitSettlements, protocolNames, releaseClaims } from './delivery-store.js';
import { loadContactsFor } from './load-contacts.js';
import type { RetryPolicy } from './retry-policy.js';
import { settle, type Settlement } from './settle.js';

export interface DeliveryOptions {
  batchSize: number;
  leaseMs: number;
  /** Sends in flight at once, per channel. */
  concurrency: number;
  retry: RetryPolicy;
  idleMs: number;
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(lanes);
}

async function withRetries<T>(attempts: number, run: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await run();
    } catch (error) {
      if (i >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** i));
    }
  }
}

/**
 * The delivery worker: claims due notifications in batches, renders and sends each through its
 * channel's provider (per-channel concurrency), then commits every outcome, attempt record and
 * event of the batch in one transaction. Delivery is at-least-once: a worker killed between a
 * provider's acceptance and the commit leaves the row leased; when the lease expires another
 * worker sends it again.
 */
export function createDeliveryWorker(deps: Deps, options: DeliveryOptions): JobLoop {
  const links = new TrackingLinks(deps.secrets, deps.config.publicUrl);
  const statistics = tableStatistics(deps.db, 'notifications', deps.log);
  let stopping = false;

  async function send(
    n: Awaited<ReturnType<typeof claimNotifications>>[number],
    contacts: Awaited<ReturnType<typeof loadContactsFor>>,
    names: Map<string, string>,
    captured: CapturedMessage[],
  ) {
    const channel: Channel = n.fallback_channel ?? n.channel;
    const walletContacts = contacts.get(n.wallet);
    const to = contactFor(channel, walletContacts);
    const provider = deps.channels.providerFor(channel, n.environment);
    const started = performance.now();
    let outcome: SendOutcome;
    if (!to) {
      outcome = { kind: 'failed', error: `the wallet no longer has a verified ${channel} contact` };
    } else {
      try {
        const message = composeMessage({ ...n, protocol_name: names.get(n.protocol_id) ?? n.protocol_id }, channel, to, links);
        if (provider === deps.channels.capture) {
          // Captures are written with the batch's outcomes, in the same transaction.
          const capture = deps.channels.capture.capture(message);
          captured.push(capture);
          outcome = capture.outcome;
        } else {
          outcome = await provider.send(message);
        }
      } catch (error) {
        outcome = { kind: 'retry', error: `provider error: ${(error as Error).message}` };
      }
    }
    return settle(n, outcome, {
      provider: provider.name,
      durationMs: performance.now() - started,
      now: deps.now(),
      policy: options.retry,
      hasPhone: walletContacts?.hasPhone ?? false,
    });
  }

  async function pass(): Promise<number> {
    if (stopping) return 0;
    const claimed = await claimNotifications(deps.db, options.batchSize, options.leaseMs, deps.now());
    if (claimed.length === 0) return 0;
    if (claimed.length === options.batchSize) statistics.busy();
    const [contacts, names] = await Promise.all([
      loadContactsFor(deps.db, deps.secrets, [...new Set(claimed.map((n) => n.wallet))]),
      protocolNames(deps.db, [...new Set(claimed.map((n) => n.protocol_id))]),
    ]);
    const settled: Settlement[] = [];
    const captured: CapturedMessage[] = [];
    const unstarted: typeof claimed = [];
    const byChannel = new Map<Channel, typeof claimed>();
    for (const n of claimed) {
      const channel = n.fallback_channel ?? n.channel;
      byChannel.set(channel, [...(byChannel.get(channel) ?? []), n]);
    }
    await Promise.all(
      [...byChannel.values()].map((group) =>
        pool(group, options.concurrency, async (n) => {
          if (stopping) {
            unstarted.push(n);
            return;
          }
          settled.push(await send(n, contacts, names, captured));
        }),
      ),
    );
    await withRetries(4, () =>
      deps.db.transaction(async (tx) => {
        await insertCaptured(tx, captured);
        return commitSettlements(tx, settled, deps.now());
      }),
    );
    await releaseClaims(deps.db, unstarted);
    if (settled.some((s) => s.event)) deps.wakeup.notify('webhooks');
    if (settled.some((s) => s.status === 'delivered')) deps.wakeup.notify('receipts');
    if (settled.some((s) => s.status === 'queued' && s.nextAttemptAt && s.nextAttemptAt <= deps.now())) loop.wake();
    return claimed.length;
  }

  const loop = new JobLoop({ name: 'delivery', log: deps.log, idleMs: options.idleMs, pass });
  deps.wakeup.on('notifications', () => loop.wake());
  const stop = loop.stop.bind(loop);
  loop.stop = async () => {
    stopping = true;
    await stop();
  };
  return loop;
}
