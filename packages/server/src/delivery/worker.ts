import { insertCaptured, type CapturedMessage } from '../channels/capture.js';
import type { Channel, SendOutcome } from '../channels/provider.js';
import type { Queryable } from '../db/connection.js';
import type { Deps } from '../deps.js';
import { TrackingLinks } from '../engagement/tracking-links.js';
import { JobLoop } from '../jobs/loop.js';
import { batchedWrites } from '../jobs/batched-writes.js';
import { untilDone } from '../jobs/until-done.js';
import { tableStatistics } from '../db/table-statistics.js';
import { MissingVariableError, TemplateRenderError } from '../templates/compile-template.js';
import { composeMessage, CONTACT, contactFor } from './compose-message.js';
import { commitSettlements, leaseNotifications, lockDueNotifications, protocolNames, releaseClaims, withTemplates, type DueNotification } from './delivery-store.js';
import { holdLeases } from './hold-leases.js';
import { subscriptionRefusal } from './load-subscriptions.js';
import { recipientReader, type Recipient, type RecipientReader } from './recipient-reader.js';
import type { RetryPolicy } from './retry-policy.js';
import { SendingChannels } from './sending-channels.js';
import { optedOut, settle, type Settlement } from './settle.js';

export interface DeliveryOptions {
  batchSize: number;
  leaseMs: number;
  /** Sends in flight at once, per channel. */
  concurrency: number;
  retry: RetryPolicy;
  idleMs: number;
}

/** The channel a row is sent on: its SMS fallback once it has one. */
const sentOn = (n: DueNotification): Channel => n.fallback_channel ?? n.channel;

/** While a channel is full, a claim reads this many batches of due rows for the other channels' rows. */
const LOOKAHEAD = 4;

/** An outcome is committed at most this long after its provider answered… */
const COMMIT_AFTER_MS = 50;
/** …or at once when this many wait. */
const COMMIT_ROWS = 50;
/** How often a process repeats its warning that a provider refuses the gateway's settings. */
const SETUP_WARNING_EVERY_MS = 60_000;
/** Per gateway (its delivery loops share it): when each channel's setup warning was last given. */
const setupWarnings = new WeakMap<Deps, Map<Channel, number>>();

/**
 * The delivery worker. Each pass locks a batch of due notifications in a transaction. Those whose
 * provider is the capture provider (sandbox keys, channels without a provider) are rendered,
 * captured and settled before that transaction commits: they go from `queued` to `delivered` in
 * one write, and a worker that dies mid-batch leaves them queued. The others are leased and marked
 * `sending` in the same transaction; after it commits they are rendered and sent through their
 * channel's provider (per-channel concurrency), and their outcomes, attempt records and events
 * are committed as they come (outcomeWriter), at most COMMIT_AFTER_MS after each answer, while
 * the rest of the batch is still being sent. A pass does not wait for its batch's sends: the
 * loop claims again while they are in flight, leaving out the channels that are full, and the
 * sends of every batch in flight, of every loop of the process, share each channel's lanes
 * (SendingChannels). A slow or unanswering provider then holds up the sends waiting for it only,
 * never the other channels'. Delivery through a provider is at-least-once: a
 * worker killed between a provider's acceptance and the commit leaves the row leased; when the
 * lease expires another worker sends it again. Only the answers of those last milliseconds are
 * exposed to a kill, never a whole batch, so a notification is repeated once at most by a kill.
 */
export function createDeliveryWorker(
  deps: Deps,
  options: DeliveryOptions,
  channels: SendingChannels = new SendingChannels(options.concurrency, options.batchSize),
): JobLoop {
  const links = new TrackingLinks(deps.secrets, deps.config.publicUrl);
  const statistics = tableStatistics(deps.db, 'notifications', deps.log);
  let stopping = false;
  /** The batches this loop has claimed whose sends are not all settled. */
  const inFlight = new Set<Promise<void>>();
  /** A batch that could not be settled: the next pass fails with it, so the loop backs off. */
  let failure: { error: unknown } | undefined;
  /** This loop, as the owner of the work it has waiting in the shared lanes. */
  const owner = {};
  /** When a loop of this process last warned that a channel's provider refuses the gateway's settings. */
  const setupWarnedAt = setupWarnings.get(deps) ?? new Map<Channel, number>();
  setupWarnings.set(deps, setupWarnedAt);

  /**
   * The attempt in the log: each at debug level; a provider refusing the gateway's own settings
   * (credentials, sender) at warn, once a minute per channel in the process, since every message of the channel
   * then fails until the operator fixes them. Errors name no contact (providers redact them).
   */
  function logAttempt(n: DueNotification, channel: Channel, provider: string, outcome: SendOutcome, durationMs: number) {
    const error = 'error' in outcome ? outcome.error : undefined;
    deps.log.debug({ notificationId: n.id, channel, provider, outcome: outcome.kind, error, durationMs: Math.round(durationMs) }, 'delivery attempt');
    if (outcome.kind !== 'failed' || !outcome.setup) return;
    const now = performance.now();
    if (now - (setupWarnedAt.get(channel) ?? -Infinity) < SETUP_WARNING_EVERY_MS) return;
    setupWarnedAt.set(channel, now);
    deps.log.warn({ channel, provider, error }, `${provider} refuses this gateway's settings: ${channel} messages fail until they are fixed`);
  }

  async function send(
    n: Awaited<ReturnType<typeof withTemplates<DueNotification>>>[number],
    recipients: RecipientReader,
    names: Map<string, string>,
    captured: CapturedMessage[],
  ): Promise<Settlement> {
    const channel = sentOn(n);
    let recipient: Recipient | undefined;
    const provider = deps.channels.providerFor(channel, n.environment);
    let started = performance.now();
    let outcome: SendOutcome;
    // Never a rejection: every row of a batch ends in a settlement, so the batch ends only when
    // all its rows have (their leases are held until then).
    try {
      // Read again while the message waited (a retry, a long queue): an opt-out, a narrowed
      // subscription or an erased identity committed meanwhile stops it.
      recipient = await recipients.read(n);
      const to = contactFor(channel, recipient.contacts);
      const refusal = subscriptionRefusal(recipient.subscription, channel, n.fallback_channel !== null);
      if (refusal?.status === 'opted_out') return optedOut(n, refusal.reason);
      started = performance.now();
      if (refusal) {
        outcome = { kind: 'failed', error: refusal.reason };
      } else if (!to) {
        outcome = { kind: 'failed', error: `the wallet no longer has a verified ${channel} contact` };
      } else {
        const message = composeMessage({ ...n, protocol_name: names.get(n.protocol_id) ?? n.protocol_id }, channel, to, links);
        if (provider === deps.channels.capture) {
          // Captures are written with the batch's outcomes, in the same transaction.
          const capture = deps.channels.capture.capture(message);
          captured.push(capture);
          outcome = capture.outcome;
        } else {
          outcome = await provider.send(message);
        }
      }
    } catch (error) {
      // A template that cannot render these variables (stored before a rule refused them) never
      // will; anything else (a provider's error, the wallet's subscription unread) is tried again.
      outcome =
        error instanceof MissingVariableError || error instanceof TemplateRenderError
          ? { kind: 'failed', error: `the template could not be rendered: ${error.message}` }
          : { kind: 'retry', error: `could not send: ${error instanceof Error ? error.message : String(error)}` };
    }
    const durationMs = performance.now() - started;
    logAttempt(n, channel, provider.name, outcome, durationMs);
    const settlement = settle(n, outcome, {
      provider: provider.name,
      durationMs,
      now: deps.now(),
      policy: options.retry,
      // A row whose read failed (a retry) still has its SMS fallback on its last attempt.
      hasPhone: (recipient ?? recipients.lastKnown(n)).contacts?.hasPhone ?? false,
    });
    const sealed = recipient?.contacts?.sealed[CONTACT[channel]];
    if (outcome.kind === 'failed' && outcome.unreachable && channel !== 'email' && sealed) {
      settlement.unreachableContact = { wallet: n.wallet, channel, sealed };
    }
    return settlement;
  }

  /**
   * Commits outcomes until the database takes them (the leases are renewed meanwhile, and a claim
   * taken over after they ran out is fenced off by the attempt counter).
   */
  async function commitUntilDone(settled: Settlement[]): Promise<void> {
    // One time for every try, the first's: the outcomes, their events and attempt records are
    // stamped with when they were first committed, and the attempt records of a try that
    // committed although its answer was lost are told by it from those of a later attempt.
    const now = deps.now();
    await untilDone(() => deps.db.transaction((tx) => commitSettlements(tx, settled, now)), {
      stopping: () => stopping,
      failed: (error, failures) => deps.log.warn({ err: error, outcomes: settled.length, failures }, 'delivery: could not commit outcomes; retrying'),
    });
    announce(settled);
  }

  /**
   * Commits a batch's outcomes while the rest of it is still being sent: COMMIT_AFTER_MS after the
   * first uncommitted answer, or as soon as COMMIT_ROWS wait.
   */
  const outcomeWriter = () => batchedWrites(commitUntilDone, { afterMs: COMMIT_AFTER_MS, atCount: COMMIT_ROWS });

  /**
   * Gives back the claims a stop left unstarted as they come (they are due again at once, and
   * count no attempt), without waiting for the sends still in flight.
   */
  const claimGiver = () => batchedWrites((rows: DueNotification[]) => releaseClaims(deps.db, rows), { afterMs: 0, atCount: Infinity });

  /** Wakes the loops that follow committed outcomes: webhooks, receipts, and this one for retries due now. */
  function announce(settled: Settlement[]): void {
    if (settled.some((s) => s.event)) deps.wakeup.notify('webhooks');
    if (settled.some((s) => s.status === 'delivered')) deps.wakeup.notify('receipts');
    if (settled.some((s) => s.status === 'queued' && s.nextAttemptAt && s.nextAttemptAt <= deps.now())) loop.wake();
  }

  const isCaptured = (n: DueNotification) => deps.channels.providerFor(sentOn(n), n.environment) === deps.channels.capture;

  /**
   * Renders and sends (or captures) each notification, at most a channel's concurrency at a time
   * in `lanes` (the process's, shared, for sends through providers; the call's own for captures);
   * answers the outcomes. With `onUnstarted`, a stop leaves the rows not yet sent to
   * it, at once, however long the sends ahead of them take. `onDone` hears each row once its work
   * is over: settled, or left unstarted.
   */
  async function sendAll(
    db: Queryable,
    rows: DueNotification[],
    captured: CapturedMessage[],
    lanes: SendingChannels,
    hooks: {
      onSettled?: (settlement: Settlement) => void;
      onUnstarted?: (n: DueNotification) => void;
      onDone?: (n: DueNotification) => void;
      /** Whether the row's claim is still this worker's to send: when not, it goes to `onLapsed`, unsent. */
      mayStart?: (n: DueNotification) => boolean;
      onLapsed?: (n: DueNotification) => void;
    } = {},
  ): Promise<Settlement[]> {
    // One after another: `db` may be the claim's transaction, one connection that runs one query at a time.
    const withTemplate = await withTemplates(db, rows);
    const names = await protocolNames(db, [...new Set(rows.map((n) => n.protocol_id))]);
    const recipients = await recipientReader(db, deps.secrets, rows);
    const settled: Settlement[] = [];
    const work = async (n: (typeof withTemplate)[number]) => {
      try {
        if (stopping && hooks.onUnstarted) {
          recipients.skip(n);
          hooks.onUnstarted(n);
          return;
        }
        if (hooks.mayStart && !hooks.mayStart(n)) {
          recipients.skip(n);
          hooks.onLapsed?.(n);
          return;
        }
        // send() answers a settlement for every row, whatever fails.
        const settlement = await send(n, recipients, names, captured);
        settled.push(settlement);
        hooks.onSettled?.(settlement);
      } finally {
        hooks.onDone?.(n);
      }
    };
    // A stop lets this loop's rows still waiting for a lane through at once (Lanes.abandon), and
    // rows reaching the lanes after it skip them: either way they are given back, not sent.
    // work() never rejects; allSettled all the same, so no row's work outlives the call.
    const laneOf = (n: DueNotification) => lanes.lanesFor(sentOn(n), deps.channels.providerFor(sentOn(n), n.environment));
    await Promise.allSettled(withTemplate.map((n) => (stopping && hooks.onUnstarted ? work(n) : laneOf(n).run(owner, () => work(n)))));
    return settled;
  }

  /**
   * Sends a claimed batch through its providers, commits the outcomes and gives back what a stop
   * left unstarted. Each row holds its place in its channel (taken by the claim) until its work
   * is over. When the batch's own reads fail, before any row is sent, its rows are given back.
   */
  async function deliver(live: DueNotification[], leasedAtMs: number): Promise<void> {
    // By id: the rows reach their lanes as copies (with their template).
    const holding = new Map(live.map((n) => [n.id, n]));
    const letGo = (n: DueNotification) => {
      if (holding.delete(n.id)) channels.release(sentOn(n));
    };
    const lease = holdLeases(deps, options.leaseMs, live, leasedAtMs);
    const writer = outcomeWriter();
    const giver = claimGiver();
    // Rows not started once the leases may have lapsed: given back unsent (due again at once, no
    // attempt counted), which changes nothing of a row another worker holds now (fenced).
    let lapsed = 0;
    try {
      await sendAll(deps.db, live, [], channels, {
        onSettled: writer.add,
        onUnstarted: giver.add,
        onDone: letGo,
        mayStart: lease.held,
        onLapsed: (n) => {
          lapsed++;
          giver.add(n);
        },
      });
    } catch (error) {
      // Due again at once rather than when the lease runs out (a release that fails leaves that).
      for (const n of holding.values()) giver.add(n);
      throw error;
    } finally {
      if (lapsed) {
        deps.log.warn(
          { notifications: lapsed, leaseMs: options.leaseMs },
          'delivery: leases of a batch could have run out (renewals failed, or the process was paused); its unsent notifications are given back unsent',
        );
      }
      const closed = await Promise.allSettled([writer.close(), giver.close()]);
      for (const n of [...holding.values()]) letGo(n);
      await lease.release();
      const refused = closed.find((result) => result.status === 'rejected');
      if (refused) throw refused.reason;
    }
  }

  /** Runs a batch's delivery beside the loop's next passes. */
  function deliverInBackground(live: DueNotification[], leasedAtMs: number): void {
    const running: Promise<void> = deliver(live, leasedAtMs)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => inFlight.delete(running));
    inFlight.add(running);
  }

  /**
   * Set when the last claim read a full window of due rows and could take none, all of full
   * channels: a new row can only be behind them, so only room in a channel (or the poll) is
   * worth a pass, not every new notification.
   */
  let waitingForRoom = false;

  async function pass(): Promise<number> {
    if (failure) {
      const { error } = failure;
      failure = undefined;
      throw error;
    }
    if (stopping) return 0;
    const now = deps.now();
    // The same moment on the monotonic clock, from which this claim's leases are counted.
    const nowMs = performance.now();
    // While a channel is full its rows are read and left due, so the claim reads further for the
    // others' rows; FIFO beyond that window, as always.
    const window = channels.anyFull() ? options.batchSize * LOOKAHEAD : options.batchSize;
    const placed: DueNotification[] = [];
    let read = 0;
    let claimed: { taken: number; settled: Settlement[] };
    try {
      claimed = await deps.db.transaction(async (tx) => {
        const due = await lockDueNotifications(tx, window, now);
        read = due.length;
        const captures: DueNotification[] = [];
        for (const n of due) {
          if (captures.length + placed.length >= options.batchSize) break;
          if (isCaptured(n)) captures.push(n);
          // A row of a full channel is left as it is: still due, for a claim with room.
          else if (channels.take(sentOn(n))) placed.push(n);
        }
        await leaseNotifications(tx, placed.map((n) => n.id), new Date(now.getTime() + options.leaseMs));
        if (captures.length === 0) return { taken: placed.length, settled: [] };
        const captured: CapturedMessage[] = [];
        // Lanes of the call's own: captures are settled in this transaction, not sent.
        const settled = await sendAll(tx, captures, captured, new SendingChannels(options.concurrency, options.batchSize));
        await insertCaptured(tx, captured);
        await commitSettlements(tx, settled, deps.now(), { held: true });
        return { taken: captures.length + placed.length, settled };
      });
    } catch (error) {
      for (const n of placed) channels.release(sentOn(n));
      throw error;
    }
    const { taken, settled: capturedSettled } = claimed;
    waitingForRoom = taken === 0 && read === window && window > options.batchSize;
    if (taken === 0) return 0;
    if (taken === options.batchSize) statistics.busy();
    announce(capturedSettled);
    if (placed.length) deliverInBackground(placed, nowMs);
    return taken;
  }

  const loop = new JobLoop({ name: 'delivery', log: deps.log, idleMs: options.idleMs, pass });
  deps.wakeup.on('notifications', () => {
    if (!waitingForRoom) loop.wake();
  });
  channels.onRoom(() => {
    waitingForRoom = false;
    loop.wake();
  });
  const stop = loop.stop.bind(loop);
  // A stop lets the current pass end, then waits for every batch in flight to finish its started
  // sends, commit them and give back the rest (rows still waiting for a lane at once).
  loop.stop = async () => {
    stopping = true;
    channels.abandon(owner);
    await stop();
    await Promise.all(inFlight);
    if (failure) deps.log.error({ err: failure.error }, 'delivery: a batch could not be settled; its rows are claimed again once their lease runs out');
  };
  return loop;
}
