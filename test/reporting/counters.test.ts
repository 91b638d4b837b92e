import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../packages/server/src/db/connection.js';
import { reserveSends, type QuotaProtocol } from '../../packages/server/src/limits/quota.js';
import { call, onPostgres, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { importIdentity, registeredWallet } from '../support/wallets.js';

/** Each counter table next to the same figures recounted from the rows; they must be equal. */
const RECOUNTS: [string, string, string][] = [
  [
    'notification_counts',
    `SELECT protocol_id, environment, hour, status, delivery_channel, count::int FROM notification_counts WHERE count <> 0`,
    `SELECT protocol_id, environment, date_trunc('hour', created_at, 'UTC') AS hour, status, coalesce(fallback_channel, channel, '') AS delivery_channel, count(*)::int
     FROM notifications GROUP BY 1, 2, 3, 4, 5`,
  ],
  [
    'broadcast_counts',
    `SELECT broadcast_id, status, count::int FROM broadcast_counts WHERE count <> 0`,
    `SELECT broadcast_id, status, count(*)::int FROM notifications WHERE broadcast_id IS NOT NULL GROUP BY 1, 2`,
  ],
  [
    'engagement_counts',
    `SELECT protocol_id, environment, hour, kind, count::int FROM engagement_counts WHERE count <> 0`,
    `SELECT n.protocol_id, n.environment, date_trunc('hour', n.created_at, 'UTC') AS hour, e.kind, count(DISTINCT n.id)::int
     FROM engagement_events e JOIN notifications n ON n.id = e.notification_id
     WHERE n.status = 'delivered' AND n.channel = 'email' AND n.fallback_channel IS NULL GROUP BY 1, 2, 3, 4`,
  ],
  [
    'audience_counts',
    `SELECT protocol_id, day, registered::int, broadcastable::int, email::int, telegram::int, sms::int FROM audience_counts
     WHERE registered <> 0 OR broadcastable <> 0 OR email <> 0 OR telegram <> 0 OR sms <> 0`,
    `SELECT protocol_id, day, count(*) FILTER (WHERE registered)::int AS r, count(*) FILTER (WHERE subscribed AND (e OR t OR s))::int AS b,
            count(*) FILTER (WHERE subscribed AND e)::int AS e, count(*) FILTER (WHERE subscribed AND t)::int AS t, count(*) FILTER (WHERE subscribed AND s)::int AS s
     FROM (SELECT s.protocol_id, (s.subscribed_at AT TIME ZONE 'UTC')::date AS day, cardinality(s.channels) > 0 AS registered, s.subscribed,
                  'email' = ANY(s.channels) AND i.email_enc IS NOT NULL AND i.email_verified_at IS NOT NULL AS e,
                  'telegram' = ANY(s.channels) AND i.telegram_chat_enc IS NOT NULL AND i.telegram_linked_at IS NOT NULL AS t,
                  'sms' = ANY(s.channels) AND i.phone_enc IS NOT NULL AND i.phone_verified_at IS NOT NULL AS s
           FROM subscriptions s JOIN identities i ON i.wallet = s.wallet) p
     GROUP BY 1, 2 HAVING count(*) FILTER (WHERE registered) > 0 OR count(*) FILTER (WHERE subscribed AND (e OR t OR s)) > 0`,
  ],
];

/** Counters and recount read from one snapshot: the delivery worker may change rows meanwhile. */
async function assertCountersMatchRows(db: Database, when: string): Promise<void> {
  const key = (row: Record<string, unknown>) => JSON.stringify(Object.values(row).map((v) => (v instanceof Date ? v.toISOString() : v)));
  await db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    for (const [table, counters, recount] of RECOUNTS) {
      const kept = (await tx.query(counters)).map(key).sort();
      const fresh = (await tx.query(recount)).map(key).sort();
      assert.deepEqual(kept, fresh, `${table} ${when}`);
    }
  });
}

describe('report counters stay equal to a recount of the rows', () => {
  let gw: TestGateway;
  let acme: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '10000', HERALD_WORKER_POLL_MS: '50' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
  });
  after(() => gw.close());

  it('through sends, claims, deliveries, engagement, subscription and identity changes, and deletes', async () => {
    const db = gw.herald.deps.db;
    const api = (method: string, path: string, body?: unknown) => call(gw.url, acme.apiKey, method, path, body);
    const wallets = [
      await registeredWallet(gw.url, { email: 'a@example.com', telegramChatId: '1' }),
      await registeredWallet(gw.url, { email: 'b@example.com' }),
      await registeredWallet(gw.url, { phone: '+15555550142' }),
    ];
    for (const wallet of wallets) assert.equal((await api('POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['email', 'sms'] })).status, 201);
    await assertCountersMatchRows(db, 'after subscribing');

    const single = await api('POST', '/v1/notify', { wallet: wallets[1], subject: 'Hi', body: 'See [x](https://x.example)', category: 'defi' });
    await api('POST', '/v1/notify/bulk', {
      notifications: wallets.map((wallet) => ({ wallet, subject: 'Bulk', body: 'b', category: 'governance', preferredChannel: 'email' })),
    });
    const broadcast = await api('POST', '/v1/broadcast', { subject: 'All', body: 'b', category: 'system' });
    assert.equal(broadcast.status, 202);
    await api('DELETE', `/v1/subscriptions/${wallets[2]}`);
    await api('POST', '/v1/notify', { wallet: wallets[2], subject: 'Opted out', body: 'b', category: 'defi' });
    await assertCountersMatchRows(db, 'after sending');

    await waitFor(async () => {
      const [{ pending }] = await db.query<{ pending: number }>(`SELECT count(*)::int AS pending FROM notifications WHERE status IN ('queued', 'sending')`);
      return pending === 0;
    });
    const done = await api('GET', `/v1/broadcasts/${broadcast.body.broadcast_id}`);
    // The broadcast's message to the wallet that opted out ends opted_out when the opt-out came first.
    const { delivered, opted_out: optedOut, ...rest } = done.body.counts;
    assert.deepEqual(rest, { queued: 0, sending: 0, bounced: 0, failed: 0 });
    assert.equal(delivered + optedOut, 3);
    assert.ok(optedOut <= 1);
    await assertCountersMatchRows(db, 'after delivery');

    const mail = (await api('GET', `/v1/sandbox/messages?channel=email&wallet=${wallets[1]}`)).body.data.find(
      (m: any) => m.notificationId === single.body.notificationId,
    );
    const local = (url: string) => url.replace(/&amp;/g, '&').replace(/^https?:\/\/[^/]+/, gw.url);
    const pixel = local(mail.html.match(/src="([^"]*\/track\/open\/[^"]+)"/)[1]);
    await fetch(pixel);
    await fetch(pixel);
    await fetch(local(mail.html.match(/href="([^"]*\/track\/click\/[^"]+)"/)[1]), { redirect: 'manual' });
    const unsubscribe = local(mail.html.match(/href="([^"]*\/unsubscribe\/[^"]+)"/)[1]);
    assert.equal((await fetch(unsubscribe, { method: 'POST' })).status, 200);
    await assertCountersMatchRows(db, 'after engagement');
    const engagement = await api('GET', '/v1/engagement');
    // Emails: the single send, two of the bulk (the third wallet has only a phone), two of the broadcast.
    assert.equal(engagement.body.deliveredEmails, 5);
    assert.deepEqual([engagement.body.openRate, engagement.body.clickRate, engagement.body.unsubscribeRate], [0.2, 0.2, 0.2]);

    // Keyed sends (a transaction), their retries (nothing new), a sandbox send.
    const keyed = { wallet: wallets[0], subject: 'Keyed', body: 'b', category: 'defi', idempotencyKey: 'counters-1' };
    assert.equal((await api('POST', '/v1/notify', keyed)).body.status, 'queued');
    assert.equal((await api('POST', '/v1/notify', keyed)).body.status, 'duplicate');
    const keyedBulk = wallets.map((wallet, i) => ({ wallet, subject: 'Keyed bulk', body: 'b', category: 'defi', idempotencyKey: `counters-bulk-${i}` }));
    assert.equal((await api('POST', '/v1/notify/bulk', { notifications: keyedBulk })).status, 202);
    assert.equal((await api('POST', '/v1/notify/bulk', { notifications: keyedBulk })).status, 202);
    assert.equal((await call(gw.url, acme.sandboxApiKey, 'POST', '/v1/notify', { ...keyed, idempotencyKey: undefined })).status, 202);
    // Refused for quota: nothing is counted; then the reserve-first statement, which counts its own rows.
    const full = await gw.createProtocol({ tier: 1, name: 'Full' });
    const [fullRow] = await db.query<QuotaProtocol>('SELECT id, tier, overage_enabled FROM protocols WHERE id = $1', [full.id]);
    assert.equal(await reserveSends(db, fullRow, 49_999, new Date()), true);
    const toFull = (body: unknown) => call(gw.url, full.apiKey, 'POST', '/v1/notify/bulk', body);
    assert.equal((await toFull({ notifications: [keyed, keyed].map((n, i) => ({ ...n, idempotencyKey: undefined, subject: `Over ${i}` })) })).status, 402);
    assert.equal((await toFull({ notifications: [{ ...keyed, idempotencyKey: undefined, subject: 'Last one' }] })).status, 202);
    await assertCountersMatchRows(db, 'after keyed, sandbox and refused sends');

    // Verifying a new channel changes coverage; losing an identity removes its subscriptions' counts.
    await importIdentity(gw.url, wallets[1], { email: 'b@example.com', phone: '+15555550143' });
    await db.query('UPDATE subscriptions SET subscribed_at = subscribed_at - interval \'3 days\' WHERE wallet = $1', [wallets[0]]);
    await db.query('DELETE FROM identities WHERE wallet = $1', [wallets[0]]);
    await assertCountersMatchRows(db, 'after identity changes');

    await db.query(`DELETE FROM notifications WHERE wallet = $1`, [wallets[1]]);
    await assertCountersMatchRows(db, 'after deleting notifications');
  });

  it('when a subscription is written while its identity changes channels', { skip: !onPostgres && 'needs concurrent transactions (PostgreSQL)' }, async () => {
    const db = gw.herald.deps.db;
    const wallet = await registeredWallet(gw.url, { telegramChatId: '77' });
    // The identity loses its chat (as when the bot is blocked); the change is not committed yet.
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    let changed!: () => void;
    const changing = new Promise<void>((resolve) => (changed = resolve));
    const change = db.transaction(async (tx) => {
      await tx.query('UPDATE identities SET telegram_linked_at = NULL WHERE wallet = $1', [wallet]);
      changed();
      await held;
    });
    await changing;
    const subscribing = call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['telegram'] });
    await new Promise((resolve) => setTimeout(resolve, 200));
    commit();
    await change;
    assert.equal((await subscribing).status, 201);
    await assertCountersMatchRows(db, 'after the concurrent change and subscription');
  });
});
