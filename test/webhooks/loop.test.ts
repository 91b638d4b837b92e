import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyWebhookSignature } from '../../packages/sdk/src/webhooks.js';
import { ConfigError, loadConfig } from '../../packages/server/src/config.js';
import { recordQuotaExceeded } from '../../packages/server/src/limits/record-quota-exceeded.js';
import { call, startGateway, type TestGateway } from '../support/gateway.js';
import { startReceiver, type Receiver } from './receiver.js';

describe('webhook background loop (worker role)', () => {
  let gw: TestGateway;
  let receiver: Receiver;

  before(async () => {
    [gw, receiver] = await Promise.all([startGateway({ env: { HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true' } }), startReceiver()]);
  });
  after(async () => {
    await gw.close();
    await receiver.close();
  });

  it('delivers a quota.exceeded event on its own, without being woken', async () => {
    const dev = await gw.createProtocol({ tier: 0 });
    const hook = await call(gw.url, dev.apiKey, 'POST', '/v1/webhooks', { url: `${receiver.url}/loop`, events: ['quota.exceeded'] });
    assert.equal(hook.status, 201);
    await recordQuotaExceeded(gw.herald.deps.db, { id: dev.id, tier: 0, overage_enabled: false }, new Date(), 1);
    const [request] = await receiver.waitForRequests(1, 10_000);
    const body = JSON.parse(request.body);
    assert.equal(body.type, 'quota.exceeded');
    assert.equal(body.data.protocol_id, dev.id);
    assert.equal(verifyWebhookSignature(request.body, String(request.headers['x-service-signature']), hook.body.secret), true);
  });
});

describe('webhook settings', () => {
  const base = { HERALD_ENCRYPTION_KEY: 'b'.repeat(64) };

  it('allows private targets by default only when embedded', () => {
    assert.equal(loadConfig({ ...base }).allowPrivateWebhooks, true);
    assert.equal(loadConfig({ ...base, DATABASE_URL: 'postgres://db/herald' }).allowPrivateWebhooks, false);
    assert.equal(loadConfig({ ...base, DATABASE_URL: 'postgres://db/herald', HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true' }).allowPrivateWebhooks, true);
    assert.equal(loadConfig({ ...base, HERALD_ALLOW_PRIVATE_WEBHOOKS: 'false' }).allowPrivateWebhooks, false);
    assert.throws(() => loadConfig({ ...base, HERALD_ALLOW_PRIVATE_WEBHOOKS: 'yes' }), ConfigError);
  });

  it('gives receivers 15 s by default', () => {
    assert.equal(loadConfig({ ...base }).webhookTimeoutMs, 15_000);
    assert.equal(loadConfig({ ...base, HERALD_WEBHOOK_TIMEOUT_MS: '2500' }).webhookTimeoutMs, 2500);
    assert.throws(() => loadConfig({ ...base, HERALD_WEBHOOK_TIMEOUT_MS: '50' }), ConfigError);
  });
});
