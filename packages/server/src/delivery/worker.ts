import { insertCaptured, type CapturedMessage } from '../channels/capture.js';
import type { Channel, SendOutcome } from '../channels/provider.js';
import type { Queryable } from '../db/connection.js';
import type { Deps } from '../deps.js';
import { TrackingLinks } from '../engagement/tracking-links.js';
import { JobLoop } from '../jobs/loop.js';
import { tableStatistics } from '../db/table-statistics.js';
import { composeMessage, contactFor } from './compose-message.js';
import { commitSettlements, leaseNotifications, lockDueNotifications, protocolNames, releaseClaims, renewLeases, withTemplates, type DueNotification } from './delivery-store.js';
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
 * The delivery worker. Each pass locks a batch of due notifications in a transaction. Those whose
 * provider is the capture provider (sandbox keys, channels without a provider) are rendered,
 * captured and settled before that transaction commits: they go from `queued` to `delivered` in
 * one write, and a worker that dies mid-batch leaves them queued. The others are leased and marked
 * `sending` in the same transaction; after it commits they are rendered and sent through their
 * channel's provider (per-channel concurrency), and every outcome, attempt record and event of
 * the batch is committed in one more transaction. Delivery through a provider is at-least-once: a
 * worker killed between a provider's acceptance and the commit leaves the row leased; when the
 * lease expires another worker sends it again.
 */
export function createDeliveryWorker(deps: Deps, options: DeliveryOptions): JobLoop {
  const links = new TrackingLinks(deps.secrets, deps.config.publicUrl);
  const statistics = tableStatistics(deps.db, 'notifications', deps.log);
  let stopping = false;

  async function send(
    n: Awaited<ReturnType<typeof withTemplates<DueNotification>>>[number],
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

  /**
   * Keeps a batch's leases from expiring while it is sent and settled: every third of the lease,
   * the claims still held are leased for a full term again. A slow provider or a large batch then
   * never lets another worker take a notification that is still being sent; a worker that dies
   * stops renewing, and its claims come due once the last lease runs out.
   */
  function holdLeases(claims: DueNotification[], leasedAt: Date): { release(): Promise<void> } {
    if (claims.length === 0) return { release: async () => {} };
    let timer: NodeJS.Timeout | undefined;
    let renewing: Promise<void> = Promise.resolve();
    let released = false;
    const every = options.leaseMs / 3;
    const schedule = (delay = every) => {
      timer = setTimeout(() => {
        renewing = renewLeases(deps.db, claims, new Date(deps.now().getTime() + options.leaseMs))
          .catch((error: unknown) => deps.log.warn({ err: error, claims: claims.length }, 'delivery: could not renew leases'))
          .finally(() => {
            if (!released) schedule();
          });
      }, delay);
      timer.unref();
    };
    // The lease runs from the claim, not from now: the claim's transaction may have taken a while.
    schedule(Math.max(0, leasedAt.getTime() + every - deps.now().getTime()));
    return {
      async release() {
        released = true;
        clearTimeout(timer);
        await renewing;
      },
    };
  }

  const isCaptured = (n: DueNotification) => deps.channels.providerFor(n.fallback_channel ?? n.channel, n.environment) === deps.channels.capture;

  /** Renders and sends (or captures) each notification, per-channel concurrency; answers the outcomes. */
  async function sendAll(db: Queryable, rows: DueNotification[], captured: CapturedMessage[], unstarted: DueNotification[] | null): Promise<Settlement[]> {
    const [withTemplate, contacts, names] = await Promise.all([
      withTemplates(db, rows),
      loadContactsFor(db, deps.secrets, [...new Set(rows.map((n) => n.wallet))]),
      protocolNames(db, [...new Set(rows.map((n) => n.protocol_id))]),
    ]);
    const settled: Settlement[] = [];
    const byChannel = new Map<Channel, typeof withTemplate>();
    for (const n of withTemplate) {
      const channel = n.fallback_channel ?? n.channel;
      const group = byChannel.get(channel);
      if (group) group.push(n);
      else byChannel.set(channel, [n]);
    }
    await Promise.all(
      [...byChannel.values()].map((group) =>
        pool(group, options.concurrency, async (n) => {
          if (stopping && unstarted) {
            unstarted.push(n);
            return;
          }
          settled.push(await send(n, contacts, names, captured));
        }),
      ),
    );
    return settled;
  }

  async function pass(): Promise<number> {
    if (stopping) return 0;
    const now = deps.now();
    const { taken, live, settled: capturedSettled } = await deps.db.transaction(async (tx) => {
      const due = await lockDueNotifications(tx, options.batchSize, now);
      const captures: DueNotification[] = [];
      const live: DueNotification[] = [];
      for (const n of due) (isCaptured(n) ? captures : live).push(n);
      await leaseNotifications(tx, live.map((n) => n.id), new Date(now.getTime() + options.leaseMs));
      if (captures.length === 0) return { taken: due.length, live, settled: [] };
      const captured: CapturedMessage[] = [];
      const settled = await sendAll(tx, captures, captured, null);
      await insertCaptured(tx, captured);
      await commitSettlements(tx, settled, deps.now(), { held: true });
      return { taken: due.length, live, settled };
    });
    if (taken === 0) return 0;
    if (taken === options.batchSize) statistics.busy();
    const unstarted: DueNotification[] = [];
    const lease = holdLeases(live, now);
    let settled: Settlement[];
    try {
      settled = live.length ? await sendAll(deps.db, live, [], unstarted) : [];
      if (settled.length) await withRetries(4, () => deps.db.transaction((tx) => commitSettlements(tx, settled, deps.now())));
      await releaseClaims(deps.db, unstarted);
    } finally {
      await lease.release();
    }
    const all = capturedSettled.length ? [...capturedSettled, ...settled] : settled;
    if (all.some((s) => s.event)) deps.wakeup.notify('webhooks');
    if (all.some((s) => s.status === 'delivered')) deps.wakeup.notify('receipts');
    if (all.some((s) => s.status === 'queued' && s.nextAttemptAt && s.nextAttemptAt <= deps.now())) loop.wake();
    return taken;
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
