import { insertCaptured, type CapturedMessage } from '../channels/capture.js';
import type { Channel, SendOutcome } from '../channels/provider.js';
import type { Queryable } from '../db/connection.js';
import type { Deps } from '../deps.js';
import { TrackingLinks } from '../engagement/tracking-links.js';
import { JobLoop } from '../jobs/loop.js';
import { tableStatistics } from '../db/table-statistics.js';
import { MissingVariableError, TemplateRenderError } from '../templates/compile-template.js';
import { composeMessage, CONTACT, contactFor } from './compose-message.js';
import { commitSettlements, leaseNotifications, lockDueNotifications, protocolNames, releaseClaims, renewLeases, withTemplates, type DueNotification } from './delivery-store.js';
import { loadContactsFor } from './load-contacts.js';
import { subscriptionReader, subscriptionRefusal, type SubscriptionState } from './load-subscriptions.js';
import type { RetryPolicy } from './retry-policy.js';
import { optedOut, settle, type Settlement } from './settle.js';

export interface DeliveryOptions {
  batchSize: number;
  leaseMs: number;
  /** Sends in flight at once, per channel. */
  concurrency: number;
  retry: RetryPolicy;
  idleMs: number;
}

/** At most `limit` pieces of work at a time; the others wait their turn in the order they came. */
class Lanes {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The lane passes straight to the next in line, or frees up.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** An outcome is committed at most this long after its provider answered… */
const COMMIT_AFTER_MS = 50;
/** …or at once when this many wait. */
const COMMIT_ROWS = 50;
/** Waits between tries of a commit the database refused (doubling, up to the last). */
const COMMIT_RETRY_MS = [200, 400, 800, 1600, 2000];

/**
 * The delivery worker. Each pass locks a batch of due notifications in a transaction. Those whose
 * provider is the capture provider (sandbox keys, channels without a provider) are rendered,
 * captured and settled before that transaction commits: they go from `queued` to `delivered` in
 * one write, and a worker that dies mid-batch leaves them queued. The others are leased and marked
 * `sending` in the same transaction; after it commits they are rendered and sent through their
 * channel's provider (per-channel concurrency), and their outcomes, attempt records and events
 * are committed as they come (outcomeWriter), at most COMMIT_AFTER_MS after each answer, while
 * the rest of the batch is still being sent. A pass does not wait for its batch's sends: the
 * loop claims again while they are in flight, as long as it holds fewer than `batchSize` rows
 * (it waits for room to claim a quarter of a batch), and the sends of every batch in flight share
 * the loop's per-channel lanes. A slow or unanswering provider then holds up its own sends only,
 * never the other channels' or the next due rows of its own. Delivery through a provider is at-least-once: a
 * worker killed between a provider's acceptance and the commit leaves the row leased; when the
 * lease expires another worker sends it again. Only the answers of those last milliseconds are
 * exposed to a kill, never a whole batch, so a notification is repeated once at most by a kill.
 */
export function createDeliveryWorker(deps: Deps, options: DeliveryOptions): JobLoop {
  const links = new TrackingLinks(deps.secrets, deps.config.publicUrl);
  const statistics = tableStatistics(deps.db, 'notifications', deps.log);
  let stopping = false;
  /** The sends of the batches this loop has claimed and not yet settled, and the rows they hold. */
  const inFlight = new Set<Promise<void>>();
  let heldRows = 0;
  /** Fewest rows worth a claim of their own while others are in flight. */
  const smallestClaim = Math.max(1, Math.ceil(options.batchSize / 4));
  /** The loop's lanes for sends through providers, per channel, shared by every batch in flight. */
  const lanes = new Map<Channel, Lanes>();

  async function send(
    n: Awaited<ReturnType<typeof withTemplates<DueNotification>>>[number],
    contacts: Awaited<ReturnType<typeof loadContactsFor>>,
    subscriptionOf: (row: DueNotification) => Promise<SubscriptionState | undefined>,
    names: Map<string, string>,
    captured: CapturedMessage[],
  ) {
    const channel: Channel = n.fallback_channel ?? n.channel;
    const walletContacts = contacts.get(n.wallet);
    const to = contactFor(channel, walletContacts);
    const provider = deps.channels.providerFor(channel, n.environment);
    const subscription = await subscriptionOf(n);
    // An opt-out or a narrowed subscription committed while the message waited (a retry, a long queue).
    const refusal = subscriptionRefusal(subscription, channel, n.fallback_channel !== null);
    if (refusal?.status === 'opted_out') return optedOut(n, refusal.reason);
    const started = performance.now();
    let outcome: SendOutcome;
    if (refusal) {
      outcome = { kind: 'failed', error: refusal.reason };
    } else if (!to) {
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
        // A template that cannot render these variables (stored before a rule refused them) never will.
        outcome =
          error instanceof MissingVariableError || error instanceof TemplateRenderError
            ? { kind: 'failed', error: `the template could not be rendered: ${error.message}` }
            : { kind: 'retry', error: `provider error: ${(error as Error).message}` };
      }
    }
    const settlement = settle(n, outcome, {
      provider: provider.name,
      durationMs: performance.now() - started,
      now: deps.now(),
      policy: options.retry,
      hasPhone: walletContacts?.hasPhone ?? false,
    });
    const sealed = walletContacts?.sealed[CONTACT[channel]];
    if (outcome.kind === 'failed' && outcome.unreachable && channel !== 'email' && sealed) {
      settlement.unreachableContact = { wallet: n.wallet, channel, sealed };
    }
    return settlement;
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

  /** Commits outcomes until the database takes them: kept in memory through an outage, not dropped. */
  async function commitUntilDone(settled: Settlement[]): Promise<void> {
    for (let failures = 0; ; failures++) {
      try {
        await deps.db.transaction((tx) => commitSettlements(tx, settled, deps.now()));
        announce(settled);
        return;
      } catch (error) {
        // Shutting down, a few tries; running, as long as it takes (the leases are renewed meanwhile,
        // and a claim taken over after they ran out is fenced off by the attempt counter).
        if (stopping && failures >= 3) throw error;
        deps.log.warn({ err: error, outcomes: settled.length, failures: failures + 1 }, 'delivery: could not commit outcomes; retrying');
        await new Promise((resolve) => setTimeout(resolve, COMMIT_RETRY_MS[Math.min(failures, COMMIT_RETRY_MS.length - 1)]));
      }
    }
  }

  /**
   * Commits a batch's outcomes while the rest of it is still being sent: COMMIT_AFTER_MS after the
   * first uncommitted answer, or as soon as COMMIT_ROWS wait, one commit at a time.
   */
  function outcomeWriter(): { add(settlement: Settlement): void; close(): Promise<void> } {
    let waiting: Settlement[] = [];
    let timer: NodeJS.Timeout | undefined;
    let chain: Promise<void> = Promise.resolve();
    let failure: { error: unknown } | undefined;
    const commit = () => {
      clearTimeout(timer);
      timer = undefined;
      if (waiting.length === 0) return;
      const taken = waiting;
      waiting = [];
      chain = chain.then(() => (failure ? undefined : commitUntilDone(taken))).catch((error: unknown) => {
        failure = { error };
      });
    };
    return {
      add(settlement) {
        waiting.push(settlement);
        if (waiting.length >= COMMIT_ROWS) commit();
        else timer ??= setTimeout(commit, COMMIT_AFTER_MS);
      },
      async close() {
        commit();
        await chain;
        if (failure) throw failure.error;
      },
    };
  }

  /** Wakes the loops that follow committed outcomes: webhooks, receipts, and this one for retries due now. */
  function announce(settled: Settlement[]): void {
    if (settled.some((s) => s.event)) deps.wakeup.notify('webhooks');
    if (settled.some((s) => s.status === 'delivered')) deps.wakeup.notify('receipts');
    if (settled.some((s) => s.status === 'queued' && s.nextAttemptAt && s.nextAttemptAt <= deps.now())) loop.wake();
  }

  const isCaptured = (n: DueNotification) => deps.channels.providerFor(n.fallback_channel ?? n.channel, n.environment) === deps.channels.capture;

  /**
   * Renders and sends (or captures) each notification, at most a channel's concurrency at a time
   * in `laneMap` (the loop's shared lanes for sends through providers, the call's own for
   * captures); answers the outcomes.
   */
  async function sendAll(
    db: Queryable,
    rows: DueNotification[],
    captured: CapturedMessage[],
    unstarted: DueNotification[] | null,
    laneMap: Map<Channel, Lanes>,
    onSettled?: (settlement: Settlement) => void,
  ): Promise<Settlement[]> {
    // One after another: `db` may be the claim's transaction, one connection that runs one query at a time.
    const withTemplate = await withTemplates(db, rows);
    const contacts = await loadContactsFor(db, deps.secrets, [...new Set(rows.map((n) => n.wallet))]);
    const names = await protocolNames(db, [...new Set(rows.map((n) => n.protocol_id))]);
    const subscriptionOf = subscriptionReader(db, rows);
    const settled: Settlement[] = [];
    // A channel's rows in one map share a provider (capture ones are never sent with others).
    const lanesOf = (n: DueNotification) => {
      const channel = n.fallback_channel ?? n.channel;
      let lane = laneMap.get(channel);
      if (!lane) {
        const provider = deps.channels.providerFor(channel, n.environment);
        laneMap.set(channel, (lane = new Lanes(Math.min(options.concurrency, provider.maxConcurrency ?? Infinity))));
      }
      return lane;
    };
    await Promise.all(
      withTemplate.map((n) =>
        lanesOf(n).run(async () => {
          if (stopping && unstarted) {
            unstarted.push(n);
            return;
          }
          const settlement = await send(n, contacts, subscriptionOf, names, captured);
          settled.push(settlement);
          onSettled?.(settlement);
        }),
      ),
    );
    return settled;
  }

  /** Sends a claimed batch through its providers, commits the outcomes and gives back what a stop left unstarted. */
  async function deliver(live: DueNotification[], leasedAt: Date): Promise<void> {
    const unstarted: DueNotification[] = [];
    const lease = holdLeases(live, leasedAt);
    try {
      const writer = outcomeWriter();
      try {
        await sendAll(deps.db, live, [], unstarted, lanes, writer.add);
      } finally {
        await writer.close();
      }
      await releaseClaims(deps.db, unstarted);
    } finally {
      await lease.release();
    }
  }

  /** Runs a batch's delivery beside the loop's next passes, counting the rows it holds until it ends. */
  function deliverInBackground(live: DueNotification[], leasedAt: Date): void {
    heldRows += live.length;
    const running: Promise<void> = deliver(live, leasedAt)
      // The rows stay leased: once the lease runs out they are claimed again, nothing is lost.
      .catch((error: unknown) => deps.log.error({ err: error, rows: live.length }, 'delivery: a batch could not be settled'))
      .finally(() => {
        heldRows -= live.length;
        inFlight.delete(running);
      });
    inFlight.add(running);
  }

  async function pass(): Promise<number> {
    // Room for a claim worth making: the rows of earlier batches still being sent hold their place.
    while (!stopping && options.batchSize - heldRows < smallestClaim) await Promise.race(inFlight);
    if (stopping) return 0;
    const room = options.batchSize - heldRows;
    const now = deps.now();
    const { taken, live, settled: capturedSettled } = await deps.db.transaction(async (tx) => {
      const due = await lockDueNotifications(tx, room, now);
      const captures: DueNotification[] = [];
      const live: DueNotification[] = [];
      for (const n of due) (isCaptured(n) ? captures : live).push(n);
      await leaseNotifications(tx, live.map((n) => n.id), new Date(now.getTime() + options.leaseMs));
      if (captures.length === 0) return { taken: due.length, live, settled: [] };
      const captured: CapturedMessage[] = [];
      const settled = await sendAll(tx, captures, captured, null, new Map());
      await insertCaptured(tx, captured);
      await commitSettlements(tx, settled, deps.now(), { held: true });
      return { taken: due.length, live, settled };
    });
    if (taken === 0) return 0;
    if (taken === room) statistics.busy();
    announce(capturedSettled);
    if (live.length) deliverInBackground(live, now);
    return taken;
  }

  const loop = new JobLoop({ name: 'delivery', log: deps.log, idleMs: options.idleMs, pass });
  deps.wakeup.on('notifications', () => loop.wake());
  const stop = loop.stop.bind(loop);
  // A stop lets the current pass end, then waits for every batch in flight to finish its started
  // sends, commit them and give back the rest.
  loop.stop = async () => {
    stopping = true;
    await stop();
    await Promise.all(inFlight);
  };
  return loop;
}
