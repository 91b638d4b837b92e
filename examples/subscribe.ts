/**
 * Subscriptions: subscribe a registered wallet to your protocol on the channels it chose, check the
 * subscription, and unsubscribe it — the calls behind an in-app "Notify me" toggle.
 *
 * - Subscribing needs a registered wallet (404 `WALLET_NOT_REGISTERED` otherwise), so read
 *   `wallets.status` first and offer only the channels the wallet has verified.
 * - Subscribing again changes the channels; `subscribedAt` stays unless the wallet had unsubscribed.
 * - After `unsubscribe`, every send from your protocol to that wallet answers `opted_out` (nothing is
 *   delivered or charged) until it subscribes again. The unsubscribe link in Herald's emails does the
 *   same, so read the subscription rather than keeping your own copy of the toggle.
 *
 * Run: HERALD_API_KEY=… HERALD_BASE_URL=… HERALD_WALLET=<address> CHANNELS=email,telegram \
 *   node --import tsx examples/subscribe.ts
 * Walks through subscribe → check → unsubscribe → check, printing each step as one JSON line;
 * exits 0 when the flow completed, 1 when the wallet is not registered or on an error, 2 when a
 * setting is missing.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Herald, HeraldError, type Channel, type Subscription } from '@herald/sdk';

/** Turns notifications on for the wallet on the wanted channels it has verified; null when none is possible. */
export async function enableNotifications(herald: Herald, wallet: string, wanted: Channel[]): Promise<Subscription | null> {
  const status = await herald.wallets.status(wallet);
  const channels = wanted.filter((channel) => status.channels.includes(channel));
  if (!status.registered || channels.length === 0) return null;
  return herald.subscriptions.subscribe({ walletAddress: wallet, channels });
}

/** Turns notifications off: later sends to the wallet answer `opted_out`. */
export function disableNotifications(herald: Herald, wallet: string): Promise<Subscription> {
  return herald.subscriptions.unsubscribe(wallet);
}

/** What the toggle shows. */
export async function notificationsEnabled(herald: Herald, wallet: string): Promise<boolean> {
  return (await herald.subscriptions.get(wallet)).subscribed;
}

const CHANNELS: Channel[] = ['email', 'telegram', 'sms'];
const step = (name: string, detail: object) => console.log(JSON.stringify({ step: name, ...detail }));

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const wallet = env.HERALD_WALLET;
  const wanted = (env.CHANNELS ?? 'email,telegram,sms').split(',').map((c) => c.trim()) as Channel[];
  if (!env.HERALD_API_KEY || !wallet || wanted.some((c) => !CHANNELS.includes(c))) {
    console.error(`Set HERALD_API_KEY, HERALD_WALLET and optionally CHANNELS (from ${CHANNELS.join(', ')})`);
    return 2;
  }
  const herald = new Herald({ apiKey: env.HERALD_API_KEY, baseUrl: env.HERALD_BASE_URL });
  try {
    const subscription = await enableNotifications(herald, wallet, wanted);
    if (!subscription) {
      console.error(`${wallet} is not registered with Herald or has verified none of ${wanted.join(', ')}: nothing to subscribe`);
      return 1;
    }
    step('subscribed', { channels: subscription.channels, subscribedAt: subscription.subscribedAt });
    step('checked', { subscribed: await notificationsEnabled(herald, wallet) });
    const after = await disableNotifications(herald, wallet);
    step('unsubscribed', { unsubscribedAt: after.unsubscribedAt });
    step('checked', { subscribed: await notificationsEnabled(herald, wallet) });
    return 0;
  } catch (error) {
    if (!(error instanceof HeraldError)) throw error;
    console.error(`Subscription flow failed: ${error.message}`);
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
