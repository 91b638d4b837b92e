/**
 * Check before sending: read each wallet's registration with `wallets.status` (GET
 * /v1/wallets/:wallet/status) and decide per wallet: send on the channel your product prefers when
 * the wallet has verified it, skip a wallet with no verified channel, and invite an unregistered
 * wallet to register instead of sending.
 *
 * - The status says only whether the wallet is registered and which channels are verified; contact
 *   details are never shown to a protocol.
 * - A direct send to an unregistered wallet answers 404 `WALLET_NOT_REGISTERED`; checking first lets
 *   you collect those wallets for an in-app "get notified" prompt (the wallet registers itself by
 *   signing a challenge: see the identities docs) instead of treating them as errors.
 * - `preferredChannel` is a hint: it is used only when the wallet can be reached on it, so pass it
 *   only after the status said so, and let Herald pick otherwise.
 * - The status does not know this protocol's subscription: the send's answer has the last word. A
 *   wallet that unsubscribed from your protocol answers `status: "opted_out"` (decision `sent`
 *   with that status and no channel), and a subscription that leaves out the preferred channel
 *   sends on another one.
 *
 * Run: HERALD_API_KEY=… HERALD_BASE_URL=… HERALD_WALLETS=<address>,<address> PREFERRED_CHANNEL=telegram \
 *   node --import tsx examples/registration-check.ts
 * Prints one decision per wallet as JSON; exits 0 when every wallet was handled, 1 on an error,
 * 2 when a setting is missing.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Herald, HeraldApiError, HeraldError, type Channel } from '@herald/sdk';

export type Decision =
  | { wallet: string; action: 'sent'; notificationId: string; status: string; channel: Channel | null }
  | { wallet: string; action: 'invite' }
  | { wallet: string; action: 'skip'; reason: string };

export interface Message {
  subject: string;
  body: string;
}

/** Looks the wallet up, then sends, invites or skips. */
export async function notifyIfReachable(herald: Herald, wallet: string, message: Message, preferred?: Channel): Promise<Decision> {
  const { registered, channels } = await herald.wallets.status(wallet);
  if (!registered) return { wallet, action: 'invite' };
  if (channels.length === 0) return { wallet, action: 'skip', reason: 'no verified channel' };
  const preferredChannel = preferred && channels.includes(preferred) ? preferred : undefined;
  try {
    const sent = await herald.notifications.send({ wallet, ...message, category: 'governance', preferredChannel });
    return { wallet, action: 'sent', notificationId: sent.notificationId, status: sent.status, channel: sent.deliveryChannel };
  } catch (error) {
    // The wallet erased its identity between the check and the send.
    if (error instanceof HeraldApiError && error.code === 'WALLET_NOT_REGISTERED') return { wallet, action: 'invite' };
    throw error;
  }
}

const CHANNELS: Channel[] = ['email', 'telegram', 'sms'];

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const wallets = (env.HERALD_WALLETS ?? '').split(/[\s,]+/).filter(Boolean);
  if (!env.HERALD_API_KEY || wallets.length === 0) {
    console.error('Set HERALD_API_KEY and HERALD_WALLETS (addresses separated by commas or spaces)');
    return 2;
  }
  const preferred = env.PREFERRED_CHANNEL as Channel | undefined;
  if (preferred !== undefined && !CHANNELS.includes(preferred)) {
    console.error(`PREFERRED_CHANNEL must be one of ${CHANNELS.join(', ')}`);
    return 2;
  }
  const herald = new Herald({ apiKey: env.HERALD_API_KEY, baseUrl: env.HERALD_BASE_URL });
  const message = { subject: 'Proposal 12 closes tonight', body: 'Voting on **proposal 12** closes at 20:00 UTC. Cast your vote in the app.' };
  const decisions: Decision[] = [];
  try {
    for (const wallet of wallets) decisions.push(await notifyIfReachable(herald, wallet, message, preferred));
  } catch (error) {
    if (!(error instanceof HeraldError)) throw error;
    console.log(JSON.stringify({ decisions }));
    console.error(`Stopped after ${decisions.length} of ${wallets.length} wallets: ${error.message}`);
    return 1;
  }
  console.log(JSON.stringify({ decisions }));
  return 0;
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
