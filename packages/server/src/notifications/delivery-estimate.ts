import type { Channel } from '../channels/provider.js';
import type { Queryable } from '../db/connection.js';

/** Typical provider hand-off time per channel, used until real attempts have been observed. */
const DEFAULT_LATENCY_MS: Record<Channel, number> = { email: 800, telegram: 300, sms: 1200 };
/** Assumed drain rate before any throughput is observed (a worker's per-channel concurrency, roughly). */
const DEFAULT_RATE_PER_S: Record<Channel, number> = { email: 50, telegram: 30, sms: 20 };

export interface ChannelLoad {
  /** Notifications queued or being sent on the channel. */
  depth: number;
  /** Deliveries per second recently observed (0 when none). */
  ratePerSecond: number;
  /** Median provider hand-off time recently observed (0 when none). */
  latencyMs: number;
}

/** The longest estimate given: a queue that does not move must not make the answer unbounded. */
export const MAX_ESTIMATE_MS = 86_400_000;

/** Time for the queue ahead to drain at the observed rate, plus one hand-off, at most a day. Pure. */
export function estimateDeliveryMs(channel: Channel, load: ChannelLoad): number {
  const rate = load.ratePerSecond > 0 ? load.ratePerSecond : DEFAULT_RATE_PER_S[channel];
  const latency = load.latencyMs > 0 ? load.latencyMs : DEFAULT_LATENCY_MS[channel];
  return Math.min(MAX_ESTIMATE_MS, Math.round((load.depth / rate) * 1000 + latency));
}

const SAMPLE_EVERY_MS = 1000;
/** A sample overdue by more than this is taken before answering (`fresh`). */
const STALE_AFTER_MS = 4000;
/** How long an answer waits for that sample at most; past it, the last sample answers. */
const FRESH_WAIT_MS = 250;
const DEPTH_CAP = 1_000_000;
/** Queued rows counted per millisecond between samples: a count may take about 2% of the time. */
const ROWS_PER_MS_BETWEEN_SAMPLES = 40;

/**
 * Wait before the next sample, given the queue depth just counted. Counting reads every queued
 * row (roughly half a microsecond each), so with a large backlog (a million-recipient broadcast)
 * a count takes a good part of a second: sampled every second, it alone would keep half a core
 * busy. The wait grows with the backlog instead, and the estimate barely moves between samples
 * then, since a large backlog drains slowly. Pure.
 */
export function nextSampleDelayMs(queuedRows: number): number {
  return Math.max(SAMPLE_EVERY_MS, Math.round(queuedRows / ROWS_PER_MS_BETWEEN_SAMPLES));
}

/**
 * The delivery rate after a sample window (0: none known yet, `fallback` stands in): `observed` is
 * what was delivered per second in it. Only a window in which the queue never emptied (messages
 * due at both ends; one waiting for a retry later is not work the workers could have done) shows
 * what the workers can do; in any other the deliveries were bounded by what arrived, so it may
 * raise the rate but never lower it. Otherwise a quiet hour would make the
 * next burst look like an hour's work. Exponentially weighted. Pure.
 */
export function nextRate(current: number, observed: number, busyThroughout: boolean, fallback: number): number {
  if (!busyThroughout && observed <= (current || fallback)) return current;
  return current === 0 ? observed : current * 0.7 + observed * 0.3;
}

/**
 * Whether the queue stayed non-empty through a sample window, as far as its two ends tell: work
 * due at the end, and less delivered during the window than was due at its start (the workers did
 * not get through even that). A send sees its own message queued when it triggers a sample, so
 * light traffic finds one due at both ends of every window: had that counted, one delivery a
 * second would have been taken for all the workers can do. Pure.
 */
export function busyThroughout(dueAtStart: number, delivered: number, dueAtEnd: number): boolean {
  return dueAtEnd > 0 && delivered < dueAtStart;
}

/**
 * Samples queue depth and delivery throughput per channel off the request path (a request reads
 * the last sample and may trigger the next one): once a second, or less often when the queue is
 * long (nextSampleDelayMs). A request that finds the last sample stale (the gateway was idle)
 * waits for a new one (`fresh`). Throughput is an exponentially weighted rate over
 * delivery_attempts rows added since the previous sample (nextRate).
 */
export class DeliveryEstimator {
  private loads: Record<Channel, ChannelLoad> = {
    email: { depth: 0, ratePerSecond: 0, latencyMs: 0 },
    telegram: { depth: 0, ratePerSecond: 0, latencyMs: 0 },
    sms: { depth: 0, ratePerSecond: 0, latencyMs: 0 },
  };
  private lastSampleAt = 0;
  private nextSampleAt = 0;
  /** Until when the last completed sample counts as fresh (`fresh`). */
  private freshUntil = 0;
  /** Messages due (or being sent) per channel at the last sample: whether a window was busy. */
  private due: Record<Channel, number> = { email: 0, telegram: 0, sms: 0 };
  private lastAttemptId = -1;
  private sampling: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly now: () => number = Date.now,
    private readonly freshWaitMs = FRESH_WAIT_MS,
  ) {}

  /**
   * `ahead`: messages of the same request queued on the channel before this one, so the items of
   * a bulk request are estimated by their place in the queue.
   */
  estimate(channel: Channel, ahead = 0): number {
    this.refreshSoon();
    const load = this.loads[channel];
    return estimateDeliveryMs(channel, ahead ? { ...load, depth: load.depth + ahead } : load);
  }

  /**
   * Nothing to wait for (undefined) while samples are taken when due, as any traffic takes them.
   * When the last completed sample is long overdue (the gateway was idle), a promise of the next
   * one, which every request arriving meanwhile waits for too, so an estimate does not rest on a
   * queue that drained or filled while nobody asked. The wait is bounded (`freshWaitMs`): a slow
   * count, or a database that does not answer, leaves the answer to the last sample. The send
   * routes call it before their transaction: the sample reads through the gateway's own
   * connections, which on the embedded database wait for any transaction in progress.
   */
  fresh(): Promise<void> | undefined {
    if (this.now() <= this.freshUntil) return undefined;
    this.refreshSoon();
    if (!this.sampling) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.freshWaitMs)));
    return Promise.race([this.sampling, timeout]).finally(() => clearTimeout(timer));
  }

  /** Seconds to deliver `count` more messages spread over channels (broadcasts). */
  estimateBulkSeconds(counts: Partial<Record<Channel, number>>): number {
    this.refreshSoon();
    let worst = 0;
    for (const [channel, count] of Object.entries(counts) as [Channel, number][]) {
      const load = this.loads[channel];
      worst = Math.max(worst, estimateDeliveryMs(channel, { ...load, depth: load.depth + count }));
    }
    return Math.ceil(worst / 1000);
  }

  refreshSoon(): void {
    if (this.sampling || this.now() < this.nextSampleAt) return;
    this.sampling = this.sample()
      .catch(() => {})
      .finally(() => {
        this.sampling = undefined;
      });
  }

  async sample(): Promise<void> {
    const at = this.now();
    const elapsedS = this.lastSampleAt ? (at - this.lastSampleAt) / 1000 : 0;
    this.lastSampleAt = at;
    this.nextSampleAt = at + SAMPLE_EVERY_MS;
    const depths = await this.db.query<{ channel: Channel; depth: number; due: number }>(
      `SELECT channel, count(*)::int AS depth, (count(*) FILTER (WHERE status = 'sending' OR next_attempt_at <= now()))::int AS due FROM (
         SELECT channel, status, next_attempt_at FROM notifications WHERE status IN ('queued', 'sending') LIMIT ${DEPTH_CAP}
       ) q GROUP BY channel`,
    );
    this.nextSampleAt = at + nextSampleDelayMs(depths.reduce((sum, row) => sum + row.depth, 0));
    this.freshUntil = this.nextSampleAt + STALE_AFTER_MS;
    /** Messages due at the window's start, per channel. */
    const dueBefore = { ...this.due };
    for (const channel of ['email', 'telegram', 'sms'] as const) {
      const row = depths.find((d) => d.channel === channel);
      this.due[channel] = row?.due ?? 0;
      this.loads[channel].depth = row?.depth ?? 0;
    }
    if (this.lastAttemptId < 0) {
      // First sample: start counting from here rather than scanning the whole history.
      const [{ max_id }] = await this.db.query<{ max_id: number }>('SELECT coalesce(max(id), 0) AS max_id FROM delivery_attempts');
      this.lastAttemptId = Number(max_id);
      return;
    }
    const recent = await this.db.query<{ channel: Channel; delivered: number; median_ms: number | null; max_id: number }>(
      `SELECT channel, count(*)::int AS delivered, percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS median_ms, max(id) AS max_id
       FROM delivery_attempts WHERE id > $1 GROUP BY channel`,
      [this.lastAttemptId],
    );
    for (const channel of ['email', 'telegram', 'sms'] as const) {
      const load = this.loads[channel];
      const seen = recent.find((r) => r.channel === channel);
      if (elapsedS > 0) {
        const delivered = seen?.delivered ?? 0;
        load.ratePerSecond = nextRate(load.ratePerSecond, delivered / elapsedS, busyThroughout(dueBefore[channel], delivered, this.due[channel]), DEFAULT_RATE_PER_S[channel]);
      }
      if (seen?.median_ms) load.latencyMs = Math.round(seen.median_ms);
    }
    this.lastAttemptId = Math.max(this.lastAttemptId, ...recent.map((r) => Number(r.max_id)));
  }
}
