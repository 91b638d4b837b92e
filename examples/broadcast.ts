/**
 * Broadcast (Growth tier and above): subscribe the wallets that opted in to your announcements,
 * send one message to every active subscriber with `broadcasts.send`, then follow the broadcast's
 * counts by status with `broadcasts.get` until nothing is queued or sending.
 *
 * - Only registered wallets can subscribe (404 `WALLET_NOT_REGISTERED` otherwise); the channels you
 *   subscribe them on narrow where your messages go, and unverified ones are simply not reachable.
 * - A broadcast queues one notification per subscriber that has a deliverable channel
 *   (`queued_count` of `total_subscribers`); a subscriber none of whose subscribed channels is
 *   verified gets a `failed` notification instead, and wallets that unsubscribed are left out.
 * - Below the Growth tier the gateway answers 403 `TIER_REQUIRED`.
 * - The broadcast carries an idempotency key naming the announcement (`BROADCAST_KEY`): the SDK may
 *   then retry it after a lost answer, and running the script again answers with the first
 *   broadcast instead of messaging every subscriber twice.
 *
 * Run: HERALD_API_KEY=… HERALD_BASE_URL=… HERALD_WALLETS=<address>,<address> CHANNELS=email,telegram BROADCAST_KEY=upgrade-2026-06 \
 *   node --import tsx examples/broadcast.ts
 * Prints `{subscribed, skipped, broadcast}` as JSON with the final counts; exits 0 when every message
 * reached a final status, 1 when some were still in flight after 60 s or on an error (a tier below
 * Growth included), 2 when a setting is missing.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Herald, HeraldApiError, HeraldError, type Broadcast, type Channel } from '@herald/sdk';

/** Subscribes each wallet; returns the ones subscribed and the ones skipped (not registered). */
export async function subscribeAll(herald: Herald, wallets: string[], channels: Channel[]) {
  const subscribed: string[] = [];
  const skipped: { wallet: string; reason: string }[] = [];
  for (const wallet of wallets) {
    try {
      await herald.subscriptions.subscribe({ walletAddress: wallet, channels });
      subscribed.push(wallet);
    } catch (error) {
      if (!(error instanceof HeraldApiError && error.code === 'WALLET_NOT_REGISTERED')) throw error;
      skipped.push({ wallet, reason: 'not registered' });
    }
  }
  return { subscribed, skipped };
}

const inFlight = (broadcast: Broadcast) => broadcast.counts.queued + broadcast.counts.sending;

/** Reads the broadcast until none of its notifications is queued or sending, or `timeoutMs` passes. */
export async function followBroadcast(herald: Herald, id: string, { timeoutMs = 60_000, intervalMs = 1000 } = {}): Promise<Broadcast> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const broadcast = await herald.broadcasts.get(id);
    if (inFlight(broadcast) === 0 || Date.now() >= deadline) return broadcast;
    await sleep(intervalMs);
  }
}

const CHANNELS: Channel[] = ['email', 'telegram', 'sms'];

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const wallets = (env.HERALD_WALLETS ?? '').split(/[\s,]+/).filter(Boolean);
  const channels = (env.CHANNELS ?? 'email,telegram').split(',').map((c) => c.trim()) as Channel[];
  if (!env.HERALD_API_KEY || wallets.length === 0 || channels.some((c) => !CHANNELS.includes(c))) {
    console.error(`Set HERALD_API_KEY, HERALD_WALLETS (addresses separated by commas) and optionally CHANNELS (from ${CHANNELS.join(', ')})`);
    return 2;
  }
  const herald = new Herald({ apiKey: env.HERALD_API_KEY, baseUrl: env.HERALD_BASE_URL });
  try {
    const { subscribed, skipped } = await subscribeAll(herald, wallets, channels);
    const accepted = await herald.broadcasts.send(
      {
        subject: 'Protocol upgrade tonight',
        body: 'The protocol upgrades at **22:00 UTC**. Deposits pause for about 10 minutes.',
        category: 'governance',
      },
      { idempotencyKey: env.BROADCAST_KEY ?? 'announcement-protocol-upgrade' },
    );
    console.error(`Broadcast ${accepted.broadcast_id}: ${accepted.queued_count} of ${accepted.total_subscribers} subscribers queued`);
    const broadcast = await followBroadcast(herald, accepted.broadcast_id);
    console.log(JSON.stringify({ subscribed, skipped, broadcast }));
    return inFlight(broadcast) === 0 ? 0 : 1;
  } catch (error) {
    if (error instanceof HeraldApiError && error.code === 'TIER_REQUIRED') {
      console.error(`Broadcasts need the Growth tier or above: ${error.message}`);
      return 1;
    }
    if (!(error instanceof HeraldError)) throw error;
    console.error(`Broadcast failed: ${error.message}`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main().then(
    (code) => (process.exitCode = code),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
