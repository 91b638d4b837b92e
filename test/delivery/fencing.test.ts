/**
 * A claim's fencing token is its attempt counter and the fallback it was made under: the counter
 * starts again for a critical message's SMS fallback, so a worker that stalled holding a claim
 * from before the fallback must not write over, renew or give back the fallback's claim.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Channel } from '../../packages/server/src/channels/provider.js';
import { commitSettlements, releaseClaims, renewLeases } from '../../packages/server/src/delivery/delivery-store.js';
import { DEFAULT_RETRY_POLICY } from '../../packages/server/src/delivery/retry-policy.js';
import { settle } from '../../packages/server/src/delivery/settle.js';
import { call, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';

describe('delivery claim fencing across the SMS fallback', () => {
  let gw: TestGateway;
  let acme: TestProtocol;

  before(async () => {
    // No delivery loops: the test plays the workers.
    gw = await startGateway({ env: { HERALD_ROLE: 'api' } });
    acme = await gw.createProtocol({ tier: 3 });
  });
  after(() => gw.close());

  it('refuses a claim made before the fallback, and takes the fallback claim', async () => {
    const wallet = await registeredWallet(gw.url, { email: 'holder@example.com', phone: '+14155550166' });
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 'Margin call', body: 'Now', category: 'defi', priority: 'critical' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const id = sent.body.notificationId as string;
    const { db } = gw.herald.deps;
    // The SMS fallback's first claim is in flight: attempts started again at 1.
    const leasedUntil = new Date(Date.now() + 3_600_000);
    await db.query(`UPDATE notifications SET status = 'sending', attempts = 1, fallback_channel = 'sms', locked_until = $2 WHERE id = $1`, [id, leasedUntil]);
    const row = async () =>
      (await db.query<{ status: string; attempts: number; fallback_channel: string | null; locked_until: Date }>(
        'SELECT status, attempts, fallback_channel, locked_until FROM notifications WHERE id = $1',
        [id],
      ))[0];
    const claim = (fallback: Channel | null) => ({ id, protocol_id: acme.id, wallet, priority: 'critical', channel: 'email' as Channel, fallback_channel: fallback, attempts: 1, environment: 'production' as const });
    const ctx = { provider: 'smtp', durationMs: 5, now: new Date(), policy: DEFAULT_RETRY_POLICY, hasPhone: true };

    // The email claim's worker wakes up with token 1 as well.
    const stale = settle(claim(null), { kind: 'delivered', providerResponse: '250 ok' }, ctx);
    assert.equal((await commitSettlements(db, [stale], new Date())).size, 0, 'not written over the fallback claim');
    await renewLeases(db, [claim(null)], new Date(Date.now() + 10_000));
    await releaseClaims(db, [claim(null)]);
    const untouched = await row();
    assert.deepEqual([untouched.status, untouched.attempts, untouched.fallback_channel], ['sending', 1, 'sms']);
    assert.equal(untouched.locked_until.getTime(), leasedUntil.getTime(), 'the lease is neither renewed nor given back');

    const current = settle(claim('sms'), { kind: 'delivered', providerResponse: 'sid SM1 status queued' }, ctx);
    assert.deepEqual([...(await commitSettlements(db, [current], new Date()))], [id]);
    assert.equal((await row()).status, 'delivered');
  });
});
