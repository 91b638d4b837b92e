/**
 * Bulk sending: one notification per recipient, sent with `notifications.sendBulk` in chunks of 100
 * (the POST /v1/notify/bulk limit), each item with its own idempotency key, and a result reported
 * for every item.
 *
 * - Each item's key is `<campaign>:<wallet>`, so re-running the script after a crash or a refused
 *   chunk sends only what is missing: items already queued come back `duplicate` with their
 *   original notification id, and are not charged again.
 * - Because every item has a key, the SDK retries a chunk on 5xx and timeouts like a GET.
 * - A chunk is all-or-nothing: one refused request (a bad item, 402 quota, 429 after retries) stores
 *   none of its items. This script stops there and reports the rest as `not_sent`.
 * - An unregistered wallet does not fail its chunk: its item comes back `failed` with
 *   `recipientRegistered: false`.
 *
 * Run: HERALD_API_KEY=… HERALD_BASE_URL=… HERALD_WALLETS=<address>,<address>,… CAMPAIGN_ID=airdrop-7 \
 *   node --import tsx examples/batch.ts
 * Prints `{campaign, total, requests, counts, items}` as JSON (items in input order); exits 0 when
 * every chunk was accepted, 1 when one was refused (run it again to send the rest), 2 when a
 * setting is missing.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Herald, HeraldApiError, HeraldError, type NotificationParams, type SubmissionStatus } from '@herald/sdk';

/** The gateway's limit per bulk request. */
export const CHUNK_SIZE = 100;

export interface Campaign {
  id: string;
  subject: string;
  body: string;
}

export type ItemResult =
  | { wallet: string; status: SubmissionStatus; notificationId: string; deliveryChannel: string | null }
  | { wallet: string; status: 'error'; error: { code: string; message: string } }
  | { wallet: string; status: 'not_sent' };

export interface CampaignReport {
  campaign: string;
  total: number;
  requests: number;
  counts: Record<string, number>;
  items: ItemResult[];
}

/** Sends the campaign to every wallet, chunk by chunk, stopping at the first refused chunk. */
export async function sendCampaign(herald: Herald, campaign: Campaign, wallets: string[]): Promise<CampaignReport> {
  const items: ItemResult[] = [];
  let requests = 0;
  let refused = false;
  for (let start = 0; start < wallets.length; start += CHUNK_SIZE) {
    const chunk = wallets.slice(start, start + CHUNK_SIZE);
    if (refused) {
      items.push(...chunk.map((wallet) => ({ wallet, status: 'not_sent' as const })));
      continue;
    }
    const notifications: NotificationParams[] = chunk.map((wallet) => ({
      wallet,
      subject: campaign.subject,
      body: campaign.body,
      category: 'marketing',
      idempotencyKey: `${campaign.id}:${wallet}`,
    }));
    requests++;
    try {
      const { results } = await herald.notifications.sendBulk(notifications);
      // Results come back in input order, one per item.
      results.forEach((result, i) =>
        items.push({ wallet: chunk[i], status: result.status, notificationId: result.notificationId, deliveryChannel: result.deliveryChannel }),
      );
    } catch (error) {
      if (!(error instanceof HeraldError)) throw error;
      refused = true;
      const code = error instanceof HeraldApiError ? error.code : 'NETWORK_ERROR';
      items.push(...chunk.map((wallet) => ({ wallet, status: 'error' as const, error: { code, message: error.message } })));
    }
  }
  const counts: Record<string, number> = {};
  for (const item of items) counts[item.status] = (counts[item.status] ?? 0) + 1;
  return { campaign: campaign.id, total: wallets.length, requests, counts, items };
}

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const wallets = (env.HERALD_WALLETS ?? '').split(/[\s,]+/).filter(Boolean);
  if (!env.HERALD_API_KEY || wallets.length === 0) {
    console.error('Set HERALD_API_KEY and HERALD_WALLETS (addresses separated by commas or spaces)');
    return 2;
  }
  const herald = new Herald({ apiKey: env.HERALD_API_KEY, baseUrl: env.HERALD_BASE_URL });
  const campaign: Campaign = {
    id: env.CAMPAIGN_ID ?? 'spring-airdrop',
    subject: 'Your airdrop is ready to claim',
    body: 'The **spring airdrop** is live: claim it in the app before the end of the month.',
  };
  const report = await sendCampaign(herald, campaign, [...new Set(wallets)]);
  console.log(JSON.stringify(report));
  const refused = report.items.find((item) => item.status === 'error');
  if (refused && refused.status === 'error') {
    console.error(`A bulk request was refused (${refused.error.code}: ${refused.error.message}); run again with the same CAMPAIGN_ID to send the rest`);
    return 1;
  }
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
