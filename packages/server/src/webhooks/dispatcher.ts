import { performance } from 'node:perf_hooks';
import type { Deps } from '../deps.js';
import {
  claimDeliveries,
  failDeliveries,
  loadDispatchRows,
  loadEndpointState,
  recordAttempt,
  recordSuccesses,
  releaseDeliveries,
  type DispatchRow,
  type SuccessRecord,
} from './delivery-store.js';
import type { PostResult } from './post-webhook.js';
import { eventEnvelope } from './event-payloads.js';
import { fanOutEvents } from './fan-out-events.js';
import { tableStatistics } from '../db/table-statistics.js';
import { untilDone } from '../jobs/until-done.js';
import { FAILING_ENDPOINT_LIMIT_MS, nextAttemptAt } from './retry-schedule.js';
import { signingSecrets } from './webhook-secret.js';
import type { WebhookSender } from './webhook-sender.js';

/**
 * How stale a chain's copy of its endpoint may be before a request: deactivating, deleting,
 * re-pointing or rotating an endpoint reaches the deliveries already claimed within this long
 * (and the request then in flight), at the cost of one read per endpoint at most this often.
 */
const ENDPOINT_REREAD_MS = 100;

/** Successful attempts of a chain written in one statement, at most. */
export const SUCCESS_BATCH = 100;
/** How long a success may wait for others before it is written. */
const SUCCESS_DELAY_MS = 50;

export interface DispatcherOptions {
  sender: WebhookSender;
  /** Events fanned out and deliveries claimed per pass. */
  batchSize?: number;
  /** Endpoints being sent to at once, one request each; claiming pauses at this many. */
  maxEndpoints?: number;
  /**
   * Claimed deliveries not yet finished, across all endpoints; claiming pauses at this many. Far
   * above one claim per endpoint times a few slow endpoints, so that receivers holding their
   * claims for the whole lease (each request taking the full time limit) leave room for others.
   */
  maxHeld?: number;
}

/**
 * Sends due webhook deliveries. Each pass fans out new events, claims due deliveries (never of an
 * endpoint already being sent to) and starts one sequential chain per endpoint without waiting
 * for it, so a slow receiver delays only its own deliveries. Within a chain deliveries go in event
 * order; a delivery waiting for its retry does not hold back later events.
 */
export class WebhookDispatcher {
  private readonly chains = new Set<Promise<void>>();
  /** Claimed deliveries of the running chains, not yet finished. */
  private held = 0;
  private stopping = false;
  private readonly batchSize: number;
  private readonly maxEndpoints: number;
  private readonly maxHeld: number;
  private readonly leaseMs: number;
  /** Called when a chain ends, so the loop can claim what was held back behind it. */
  onChainDone: () => void = () => {};
  private readonly statistics;

  constructor(
    private readonly deps: Deps,
    private readonly options: DispatcherOptions,
  ) {
    this.batchSize = options.batchSize ?? 200;
    this.maxEndpoints = options.maxEndpoints ?? 500;
    this.maxHeld = options.maxHeld ?? 20_000;
    // Long enough for a few sends to a receiver that always takes the whole time limit.
    this.leaseMs = Math.max(60_000, 4 * options.sender.options.timeoutMs);
    this.statistics = { events: tableStatistics(deps.db, 'events', deps.log), deliveries: tableStatistics(deps.db, 'webhook_deliveries', deps.log) };
  }

  /** One pass; answers how many events and deliveries it took on (0 = nothing to do). */
  async pass(): Promise<number> {
    if (this.stopping) return 0;
    const fannedOut = await fanOutEvents(this.deps.db, { now: this.deps.now(), limit: this.batchSize });
    if (fannedOut === this.batchSize) this.statistics.events.busy();
    if (this.chains.size >= this.maxEndpoints || this.held >= this.maxHeld) await Promise.race(this.chains);
    const room = Math.min(this.batchSize, this.maxHeld - this.held);
    const endpoints = this.maxEndpoints - this.chains.size;
    // Still full (or stopping): report work so the loop comes straight back rather than sleeping.
    if (room <= 0 || endpoints <= 0 || this.stopping) return fannedOut + 1;
    const ids = await claimDeliveries(this.deps.db, { now: this.deps.now(), limit: room, leaseMs: this.leaseMs, endpoints });
    if (ids.length === 0) return fannedOut;
    if (ids.length === room) this.statistics.deliveries.busy();
    const claimedAt = performance.now();
    const rows = await loadDispatchRows(this.deps.db, ids);
    const byEndpoint = new Map<string, DispatchRow[]>();
    for (const row of rows) {
      const group = byEndpoint.get(row.endpoint_id);
      if (group) group.push(row);
      else byEndpoint.set(row.endpoint_id, [row]);
    }
    for (const group of byEndpoint.values()) this.startChain(group, claimedAt);
    return fannedOut + ids.length;
  }

  /** Resolves once every chain started so far has finished. */
  async idle(): Promise<void> {
    while (this.chains.size) await Promise.all(this.chains);
  }

  /** Stops claiming; chains finish the request in hand and give the rest back. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.idle();
  }

  private startChain(rows: DispatchRow[], claimedAt: number) {
    this.held += rows.length;
    const chain = this.runChain(rows, claimedAt)
      .catch((error) => this.deps.log.error({ err: error, endpoint: rows[0].endpoint_id }, 'webhook delivery chain failed'))
      .finally(() => {
        this.held -= rows.length;
        this.chains.delete(chain);
        this.onChainDone();
      });
    this.chains.add(chain);
  }

  /**
   * A chain's read or write of its rows, tried again until the database answers (see untilDone):
   * an outage shorter than the lease neither repeats a request nor leaves the endpoint's
   * deliveries leased, and so held back, until the lease runs out. Every write here is fenced by
   * the lease.
   */
  private untilDone<T>(endpointId: string, what: string, work: () => Promise<T>): Promise<T> {
    return untilDone(work, {
      stopping: () => this.stopping,
      failed: (error, failures) => this.deps.log.warn({ err: error, endpoint: endpointId, failures }, `webhooks: could not ${what}; retrying`),
    });
  }

  /**
   * Sends a chain's deliveries in order. Successes are written together, up to SUCCESS_BATCH at a
   * time and never more than SUCCESS_DELAY_MS after the first of them (one statement instead of
   * one per event); a failure is written at once, after the successes before it, since it may
   * deactivate the endpoint and end the chain. A process that dies holding unwritten successes
   * leaves those rows leased: they are sent again when the lease expires (at-least-once, as for a
   * death between a request and its record).
   */
  private async runChain(rows: DispatchRow[], claimedAt: number) {
    const { db, now } = this.deps;
    // One claim statement gave every row the same lease.
    const lease = rows[0].locked_until;
    const endpointId = rows[0].endpoint_id;
    const ids = (from: number) => rows.slice(from).map((row) => row.id);
    const store = <T>(what: string, work: () => Promise<T>) => this.untilDone(endpointId, what, work);
    const failInactive = (from: number) => store('end deliveries of an inactive endpoint', () => failDeliveries(db, ids(from), lease, 'endpoint is inactive', now()));
    const giveBack = (from: number) => store('give deliveries back', () => releaseDeliveries(db, ids(from), lease));
    if (!rows[0].is_active) return failInactive(0);
    let secret = signingSecrets(this.deps.secrets, rows[0], now());
    let url = rows[0].url;
    let target = await this.options.sender.target(url);
    let readAt = claimedAt;
    let successes: SuccessRecord[] = [];
    let timer: NodeJS.Timeout | undefined;
    let writing: Promise<void> = Promise.resolve();
    // Writes run one after another; a timed write failing is logged, an awaited one throws.
    const writeSuccesses = () => {
      clearTimeout(timer);
      timer = undefined;
      const batch = successes;
      successes = [];
      writing = writing.catch(() => {}).then(() => store('record delivered events', () => recordSuccesses(db, endpointId, batch)));
      return writing;
    };
    try {
      for (const [index, row] of rows.entries()) {
        if (this.stopping) return await giveBack(index);
        // The endpoint may have been deactivated, deleted, re-pointed or given a new secret since
        // the claim: read it again before a request when the last read is ENDPOINT_REREAD_MS old.
        if (performance.now() - readAt >= ENDPOINT_REREAD_MS) {
          readAt = performance.now();
          const current = await store('read the endpoint', () => loadEndpointState(db, endpointId));
          if (!current) return; // deleted, and its deliveries with it
          if (!current.is_active) return await failInactive(index);
          if (current.url !== url) {
            url = current.url;
            target = await this.options.sender.target(url);
          }
          secret = signingSecrets(this.deps.secrets, current, now());
        }
        // Never send after a stop (one may have come while the read waited), on a lease that could
        // lapse mid-request (another worker may claim the row then), nor on one that lapsed while
        // the database was out of reach.
        const leaseLeft = this.leaseMs - (performance.now() - claimedAt);
        if (this.stopping || leaseLeft < this.options.sender.options.timeoutMs + 5000) return await giveBack(index);
        const result = await this.post(row, secret, target);
        if (result.ok) {
          successes.push({ deliveryId: row.id, lease: row.locked_until, result, attempts: row.attempts + 1, at: now() });
          if (successes.length >= SUCCESS_BATCH) await writeSuccesses();
          else if (!timer) {
            timer = setTimeout(() => {
              writeSuccesses().catch((error: unknown) => this.deps.log.error({ err: error, endpoint: endpointId }, 'could not record webhook deliveries'));
            }, SUCCESS_DELAY_MS);
          }
          continue;
        }
        await writeSuccesses();
        if (await this.recordFailure(row, result)) return await failInactive(index + 1);
      }
    } finally {
      await writeSuccesses();
    }
  }

  /** One signed request for a delivery. */
  private post(row: DispatchRow, secret: string[], target: Awaited<ReturnType<WebhookSender['target']>>): Promise<PostResult> {
    const body = JSON.stringify(eventEnvelope({ id: row.event_id, type: row.event_type, data: row.event_data, created_at: row.event_created_at }));
    return this.options.sender.send(target, secret, body);
  }

  /** Records a failed attempt (retry or give up); answers whether it deactivated the endpoint. */
  private async recordFailure(row: DispatchRow, result: PostResult): Promise<boolean> {
    const now = this.deps.now();
    const attempts = row.attempts + 1;
    const retryAt = nextAttemptAt(attempts, now);
    const { deactivated } = await this.untilDone(row.endpoint_id, 'record a failed attempt', () => recordAttempt(this.deps.db, {
      deliveryId: row.id,
      endpointId: row.endpoint_id,
      lease: row.locked_until,
      result,
      attempts,
      status: retryAt ? 'pending' : 'failed',
      nextAttemptAt: retryAt,
      now,
      trackEndpointHealth: true,
      deactivateIfFailingSince: new Date(now.getTime() - FAILING_ENDPOINT_LIMIT_MS),
      deactivationReason: `every delivery attempt failed for 5 days (deactivated ${now.toISOString()})`,
    }));
    if (deactivated) this.deps.log.warn({ endpoint: row.endpoint_id }, 'webhook endpoint deactivated after 5 days of failures');
    return deactivated;
  }
}
