/**
 * Backend service: when something happens in your system (here, a lending position nears
 * liquidation), notify the owner's wallet exactly once and follow the message until it is delivered,
 * using an idempotency key derived from the event and `waitForDelivery`.
 *
 * - The idempotency key comes from the event (position + event id), so a retried job, a redelivered
 *   queue message or a second worker never sends twice: the gateway answers `duplicate` with the
 *   first notification's id. The SDK's own retries (5xx, timeouts) reuse the same key.
 * - A wallet that is not registered with Herald (404 `WALLET_NOT_REGISTERED`) or that opted out of
 *   your protocol is an expected outcome, not an error.
 * - `waitForDelivery` polls the status record until it is final (`delivered`, `bounced`, `failed`,
 *   `opted_out`). A background job can afford to wait; a request handler should not (serverless.ts).
 *
 * Run from the repository root (after `npm run build`):
 *   HERALD_API_KEY=hrld_test_… HERALD_BASE_URL=http://localhost:3000 HERALD_WALLET=<address> \
 *   EVENT_ID=evt-1 node --import tsx examples/backend.ts
 * It prints the outcome as JSON and exits 0 when the message was delivered or could not be sent by
 * design (not registered, opted out, no verified channel); 1 when delivery failed or did not finish
 * in time, or on an error (bad key, gateway unreachable); 2 when a setting is missing.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Herald, HeraldApiError, HeraldError, HeraldWaitTimeoutError, type Submission } from '@herald/sdk';

/** The event your system raised. */
export interface PositionAtRisk {
  /** Your event's unique id: the same event processed twice must not notify twice. */
  eventId: string;
  positionId: string;
  /** The position owner's Solana wallet address. */
  owner: string;
  healthFactor: number;
}

export type Outcome =
  | { outcome: 'delivered'; notificationId: string; channel: string | null; duplicate: boolean }
  | { outcome: 'not_delivered'; notificationId: string; status: string; error: string | null }
  | { outcome: 'still_pending'; notificationId: string; status: string | undefined }
  | { outcome: 'opted_out'; notificationId: string }
  | { outcome: 'unreachable'; notificationId: string }
  | { outcome: 'not_registered' };

/** Sends the warning once per event and waits up to `waitMs` for its final status. */
export async function notifyPositionAtRisk(herald: Herald, event: PositionAtRisk, { waitMs = 30_000 } = {}): Promise<Outcome> {
  let submission: Submission;
  try {
    submission = await herald.notifications.send({
      wallet: event.owner,
      subject: `Position ${event.positionId} is close to liquidation`,
      body: `Your position's **health factor is ${event.healthFactor.toFixed(2)}**. Add collateral or repay part of the loan to stay above 1.00.`,
      category: 'defi',
      // critical: if the chosen channel fails or bounces, Herald falls back to SMS once.
      priority: 'critical',
      idempotencyKey: `liquidation-warning:${event.positionId}:${event.eventId}`,
    });
  } catch (error) {
    if (error instanceof HeraldApiError && error.code === 'WALLET_NOT_REGISTERED') return { outcome: 'not_registered' };
    throw error;
  }
  const { notificationId } = submission;
  if (submission.status === 'opted_out') return { outcome: 'opted_out', notificationId };
  if (submission.status === 'failed') return { outcome: 'unreachable', notificationId };

  // `queued`, or `duplicate` when an earlier run already sent it: follow that original either way.
  try {
    const record = await herald.notifications.waitForDelivery(notificationId, { timeoutMs: waitMs, intervalMs: 500 });
    if (record.status === 'delivered') {
      return { outcome: 'delivered', notificationId, channel: record.delivery_channel, duplicate: submission.status === 'duplicate' };
    }
    if (record.status === 'opted_out') return { outcome: 'opted_out', notificationId };
    return { outcome: 'not_delivered', notificationId, status: record.status, error: record.error };
  } catch (error) {
    // Not an error of the send: the message may still arrive. Check it later, or rely on a webhook.
    // (`lastStatus` is undefined when no read answered in time.)
    if (error instanceof HeraldWaitTimeoutError) return { outcome: 'still_pending', notificationId, status: error.lastStatus };
    throw error;
  }
}

const HANDLED: ReadonlySet<Outcome['outcome']> = new Set(['delivered', 'opted_out', 'unreachable', 'not_registered']);

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const missing = ['HERALD_API_KEY', 'HERALD_WALLET'].filter((name) => !env[name]);
  if (missing.length > 0) {
    console.error(`Set ${missing.join(' and ')}`);
    return 2;
  }
  const herald = new Herald({ apiKey: env.HERALD_API_KEY, baseUrl: env.HERALD_BASE_URL });
  const event: PositionAtRisk = {
    // A demo event per wallet, so trying another wallet is another event (one event id reused
    // with another payload is refused: 409 DUPLICATE_IDEMPOTENCY_KEY).
    eventId: env.EVENT_ID ?? `demo-event-for-${env.HERALD_WALLET}`,
    positionId: env.POSITION_ID ?? 'position-42',
    owner: env.HERALD_WALLET!,
    healthFactor: Number(env.HEALTH_FACTOR ?? '1.04'),
  };
  try {
    const result = await notifyPositionAtRisk(herald, event);
    console.log(JSON.stringify(result));
    return HANDLED.has(result.outcome) ? 0 : 1;
  } catch (error) {
    if (!(error instanceof HeraldError)) throw error;
    const code = error instanceof HeraldApiError ? ` (${error.code}, HTTP ${error.statusCode})` : '';
    console.error(`Could not notify ${event.owner}: ${error.message}${code}`);
    return 1;
  }
}

// Runs only when executed directly, not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main().then(
    (code) => (process.exitCode = code),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
