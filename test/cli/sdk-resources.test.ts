import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Herald, HeraldAdmin, HeraldApiError, verifyWebhookSignature, type FetchLike } from '../../packages/sdk/src/client.js';
import { lastCode } from '../identities/wallet-key.js';
import { ADMIN_TOKEN, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { makeWallet, registeredWallet } from '../support/wallets.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

const keys = (value: object) => Object.keys(value).sort();

async function apiError(promise: Promise<unknown>): Promise<HeraldApiError> {
  const error = await promise.then(
    () => assert.fail('expected an error'),
    (e) => e,
  );
  assert.ok(error instanceof HeraldApiError, String(error));
  return error;
}

describe('SDK resources against a live gateway: exact field names', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let herald: Herald;
  let wallet: string;
  let receiver: Receiver;
  const message = () => ({ wallet, subject: 'Health factor', body: 'Your **health factor** is 1.05', category: 'defi' as const });

  before(async () => {
    gw = await startGateway({ env: { HERALD_WORKER_POLL_MS: '50', HERALD_IP_RATE_LIMIT: '10000', HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true', HERALD_WEBHOOK_TIMEOUT_MS: '2000' } });
    acme = await gw.createProtocol({ tier: 1, name: 'Acme' });
    herald = new Herald({ apiKey: acme.apiKey, baseUrl: gw.url });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com', telegramChatId: '99' });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await gw.close();
  });

  it('notifications: send, idempotent resend, get, list, waitForDelivery', async () => {
    const sent = await herald.notifications.send({ ...message(), idempotencyKey: 'sdk-1', preferredChannel: 'email' });
    assert.deepEqual(keys(sent), ['deliveryChannel', 'environment', 'estimatedDeliveryMs', 'notificationId', 'recipientRegistered', 'status']);
    assert.deepEqual([sent.status, sent.deliveryChannel, sent.environment], ['queued', 'email', 'production']);
    const again = await herald.notifications.send({ ...message(), preferredChannel: 'email' }, { idempotencyKey: 'sdk-1' });
    assert.deepEqual([again.status, again.notificationId], ['duplicate', sent.notificationId]);

    const record = await herald.notifications.waitForDelivery(sent.notificationId, { timeoutMs: 20_000, intervalMs: 50 });
    assert.deepEqual(keys(record), [
      'attempts',
      'broadcast_id',
      'category',
      'created_at',
      'delivered_at',
      'delivery_channel',
      'environment',
      'error',
      'fallback_channel',
      'last_receipt_attempt_at',
      'notification_id',
      'preferred_channel',
      'priority',
      'receipt_failure_reason',
      'receipt_requested_at',
      'receipt_status',
      'receipt_tx',
      'schedule_id',
      'status',
      'subject',
      'template_id',
      'template_version',
      'wallet',
      'write_receipt',
    ]);
    assert.equal(record.status, 'delivered');
    assert.deepEqual(keys(record.attempts[0]), ['attempt', 'channel', 'created_at', 'duration_ms', 'error', 'outcome', 'provider', 'provider_response']);
    assert.deepEqual(await herald.notifications.get(sent.notificationId), record);

    const list = await herald.notifications.list({ status: 'delivered', wallet, limit: 1 });
    assert.deepEqual(keys(list), ['data', 'page', 'total']);
    assert.deepEqual(keys(list.data[0]), ['created_at', 'delivery_channel', 'notification_id', 'receipt_status', 'receipt_tx', 'status', 'subject', 'wallet']);
    assert.equal(list.data[0].notification_id, sent.notificationId);
    assert.equal((await apiError(herald.notifications.get('01J0000000000000000000000Z'))).code, 'NOTIFICATION_NOT_FOUND');

    // Receipts: this notification asked for none; proving a real one is the receipts tests' job.
    const noReceipt = await apiError(herald.receipts.get(sent.notificationId));
    assert.deepEqual([noReceipt.statusCode, noReceipt.code], [404, 'RECEIPT_NOT_FOUND']);
    assert.match(noReceipt.message, /did not request a receipt/);
    assert.equal((await apiError(herald.receipts.get('01J0000000000000000000000Z'))).code, 'NOTIFICATION_NOT_FOUND');
  });

  it('notifications: sendBulk keeps input order; preview renders without sending', async () => {
    const stranger = makeWallet().address;
    const { results } = await herald.notifications.sendBulk([message(), { ...message(), wallet: stranger }]);
    assert.equal(results.length, 2);
    assert.deepEqual(keys(results[0]), ['deliveryChannel', 'estimatedDeliveryMs', 'notificationId', 'recipientRegistered', 'status']);
    assert.deepEqual([results[0].status, results[1].status, results[1].recipientRegistered], ['queued', 'failed', false]);

    const preview = await herald.notifications.preview(message());
    assert.deepEqual(keys(preview), ['renderedHtml', 'sms', 'smsText', 'subject', 'telegramText']);
    assert.deepEqual(keys(preview.sms), ['characters', 'encoding', 'segments']);
  });

  it('sandbox.messages and wallets.status', async () => {
    const sandbox = new Herald({ apiKey: acme.sandboxApiKey, baseUrl: gw.url });
    const sent = await sandbox.notifications.send({ ...message(), preferredChannel: 'telegram' });
    assert.equal(sent.environment, 'sandbox');
    await sandbox.notifications.waitForDelivery(sent.notificationId, { timeoutMs: 20_000, intervalMs: 50 });
    const page = await herald.sandbox.messages({ wallet, channel: 'telegram', limit: 1 });
    assert.deepEqual(keys(page), ['data', 'page', 'total']);
    assert.deepEqual(keys(page.data[0]), ['channel', 'createdAt', 'environment', 'html', 'id', 'notificationId', 'subject', 'text', 'wallet']);
    assert.equal(page.data[0].notificationId, sent.notificationId);

    assert.deepEqual(await herald.wallets.status(wallet), { registered: true, channels: ['email', 'telegram'] });
    assert.deepEqual(await herald.wallets.status(makeWallet().address), { registered: false, channels: [] });
  });

  it('identities: challenge, register, verify and delete without an API key; admin.identities.import', async () => {
    const seen: (string | undefined)[] = [];
    const fetch: FetchLike = (url, init) => {
      seen.push((init.headers as Record<string, string>).authorization);
      return globalThis.fetch(url, init);
    };
    // A client holding a key still sends none to the public routes.
    const client = new Herald({ apiKey: acme.apiKey, baseUrl: gw.url, fetch });
    const holder = makeWallet();
    const challenge = await client.identities.challenge({ wallet: holder.address });
    assert.deepEqual(keys(challenge), ['expiresAt', 'message', 'nonce']);
    const registered = await client.identities.register({ wallet: holder.address, nonce: challenge.nonce, signature: holder.sign(challenge.message), email: 'me@example.com' });
    assert.deepEqual(keys(registered), ['awaitingVerification', 'channels', 'registered', 'telegramLink', 'telegramLinkExpiresAt', 'wallet']);
    assert.deepEqual(registered.channels, { email: 'pending', telegram: 'none', sms: 'none' });
    assert.deepEqual(registered.awaitingVerification, ['email']);
    const verified = await client.identities.verify({ wallet: holder.address, channel: 'email', code: await lastCode(gw, holder.address, 'email') });
    assert.deepEqual(verified, { wallet: holder.address, channel: 'email', verified: true });
    assert.deepEqual(await herald.wallets.status(holder.address), { registered: true, channels: ['email'] });

    const forDelete = await client.identities.challenge({ wallet: holder.address, purpose: 'delete' });
    assert.deepEqual(await client.identities.delete(holder.address, { nonce: forDelete.nonce, signature: holder.sign(forDelete.message) }), { deleted: true });
    assert.equal((await herald.wallets.status(holder.address)).registered, false);
    assert.deepEqual(seen, [undefined, undefined, undefined, undefined, undefined]);
    const refused = await apiError(client.identities.verify({ wallet: holder.address, channel: 'email', code: '000000' }));
    assert.equal(refused.statusCode, 404);

    const admin = new HeraldAdmin({ adminToken: ADMIN_TOKEN, baseUrl: gw.url });
    const imported = await admin.identities.import({ wallet: holder.address, phone: '+15555550199' });
    assert.deepEqual(imported, { wallet: holder.address, channels: ['sms'] });
  });

  it('subscriptions: subscribe, get, unsubscribe', async () => {
    const subscribed = await herald.subscriptions.subscribe({ walletAddress: wallet, channels: ['telegram'] });
    assert.deepEqual(keys(subscribed), ['channels', 'subscribed', 'subscribedAt', 'unsubscribedAt', 'walletAddress']);
    assert.deepEqual([subscribed.subscribed, subscribed.channels], [true, ['telegram']]);
    assert.deepEqual(await herald.subscriptions.get(wallet), subscribed);
    const gone = await herald.subscriptions.unsubscribe(wallet);
    assert.equal(gone.subscribed, false);
    assert.equal((await apiError(herald.subscriptions.get(makeWallet().address))).code, 'WALLET_NOT_REGISTERED');
    await herald.subscriptions.subscribe({ walletAddress: wallet, channels: ['email', 'telegram'] });
  });

  it('webhooks: create, list, update, test, deliveries, retryDelivery, delete', async () => {
    const created = await herald.webhooks.create({ url: `${receiver.url}/sdk`, events: ['notification.delivered'] });
    assert.deepEqual(keys(created), ['events', 'id', 'isActive', 'secret', 'url']);
    assert.deepEqual(await herald.webhooks.list(), [{ id: created.id, url: created.url, events: created.events, isActive: true }]);
    const updated = await herald.webhooks.update(created.id, { events: ['notification.delivered', 'notification.failed'] });
    assert.deepEqual(keys(updated), ['events', 'id', 'isActive', 'url']);

    assert.deepEqual(await herald.webhooks.test(created.id), { sent: true });
    const [request] = await receiver.waitForRequests(1);
    assert.ok(verifyWebhookSignature(request.body, request.headers['x-service-signature'] as string, created.secret));

    const page = await herald.webhooks.deliveries(created.id, { limit: 5 });
    assert.deepEqual(keys(page), ['data', 'page', 'total']);
    const [delivery] = page.data;
    assert.deepEqual(keys(delivery), ['attempts', 'completedAt', 'createdAt', 'event', 'eventId', 'eventType', 'id', 'lastError', 'lastStatusCode', 'nextAttemptAt', 'status']);
    assert.deepEqual(keys(delivery.event), ['created', 'data', 'id', 'type']);
    assert.deepEqual(keys(delivery.attempts[0]), ['createdAt', 'error', 'latencyMs', 'responseBody', 'statusCode']);

    const replayed = await herald.webhooks.retryDelivery(created.id, delivery.id);
    assert.deepEqual([replayed.id, replayed.status], [delivery.id, 'pending']);

    const detail = await herald.webhooks.get(created.id);
    assert.deepEqual(keys(detail), ['createdAt', 'disabledReason', 'events', 'id', 'isActive', 'previousSecretExpiresAt', 'updatedAt', 'url']);
    const rotated = await herald.webhooks.rotateSecret(created.id, { previousSecretExpiresInSeconds: 3600 });
    assert.deepEqual(keys(rotated), ['events', 'id', 'isActive', 'previousSecretExpiresAt', 'secret', 'url']);
    assert.notEqual(rotated.secret, created.secret);
    assert.equal((await herald.webhooks.get(created.id)).previousSecretExpiresAt, rotated.previousSecretExpiresAt);
    // Until then, one request verifies with either secret (the test event is sent before test answers).
    const tests = () => receiver.requests.filter((r) => JSON.parse(r.body).data.notification_id.startsWith('test_'));
    const before = tests().length;
    assert.deepEqual(await herald.webhooks.test(created.id), { sent: true });
    const rotatedRequest = tests()[before];
    assert.ok(rotatedRequest);
    for (const secret of [created.secret, rotated.secret]) {
      assert.ok(verifyWebhookSignature(rotatedRequest.body, rotatedRequest.headers['x-service-signature'] as string, secret));
    }
    assert.equal((await apiError(herald.webhooks.rotateSecret('wh_missing'))).code, 'WEBHOOK_NOT_FOUND');
    assert.equal(await herald.webhooks.delete(created.id), undefined);
    assert.deepEqual(await herald.webhooks.list(), []);
    assert.equal((await apiError(herald.webhooks.test(created.id))).statusCode, 404);
  });

  it('schedules: once, cron, list, get, cancel', async () => {
    const once = await herald.schedules.once({ ...message(), scheduledFor: '2030-06-01T09:00:00', timezone: 'America/New_York' });
    assert.deepEqual(keys(once), ['id', 'nextRunAt', 'status']);
    assert.deepEqual([once.status, once.nextRunAt], ['PENDING', '2030-06-01T13:00:00Z']);
    const cron = await herald.schedules.cron({ ...message(), cronExpr: '*/15 * * * *' });
    const list = await herald.schedules.list({ limit: 10 });
    assert.deepEqual(keys(list), ['items', 'total']);
    assert.deepEqual(keys(list.items[0]), ['id', 'nextRunAt', 'status', 'subject', 'wallet']);
    assert.ok([once.id, cron.id].every((id) => list.items.some((s) => s.id === id)));
    const record = await herald.schedules.get(once.id);
    assert.deepEqual([record.kind, record.scheduledFor, record.timezone, record.runCount], ['once', '2030-06-01T09:00:00', 'America/New_York', 0]);
    assert.deepEqual(await herald.schedules.cancel(cron.id), { cancelled: true });
    assert.equal((await herald.schedules.get(cron.id)).status, 'CANCELLED');
    assert.equal((await apiError(herald.schedules.get('sched_missing'))).code, 'SCHEDULE_NOT_FOUND');

    // With an idempotency key a repeat is the first schedule, and another body with it is refused.
    const keyed = { ...message(), cronExpr: '0 8 * * *' };
    const first = await herald.schedules.cron(keyed, { idempotencyKey: 'sdk-cron-1' });
    assert.deepEqual(await herald.schedules.cron(keyed, { idempotencyKey: 'sdk-cron-1' }), first);
    const conflict = await apiError(herald.schedules.cron({ ...keyed, cronExpr: '0 9 * * *' }, { idempotencyKey: 'sdk-cron-1' }));
    assert.deepEqual([conflict.statusCode, conflict.code], [409, 'DUPLICATE_IDEMPOTENCY_KEY']);
  });

  it('templates: create, list, get, update, getVersion, restoreVersion, delete', async () => {
    const source = { name: 'Alert', category: 'defi' as const, subjectTemplate: 'Health {{h}}', htmlSource: '<p>{{h}}</p>', textSource: 'Health {{h}}' };
    const { templateId } = await herald.templates.create(source);
    assert.deepEqual(keys((await herald.templates.list()).data[0]), ['category', 'createdAt', 'id', 'name']);
    const record = await herald.templates.get(templateId);
    assert.deepEqual([record.version, record.serviceFooter, record.versions.length], [1, 'full', 1]);
    const updated = await herald.templates.update(templateId, { serviceFooter: 'none' });
    assert.deepEqual([updated.version, updated.serviceFooter], [2, 'none']);
    const first = await herald.templates.getVersion(templateId, 1);
    assert.deepEqual(keys(first), ['createdAt', 'current', 'htmlSource', 'id', 'serviceFooter', 'subjectTemplate', 'textSource', 'version']);
    assert.equal(first.current, false);
    assert.equal((await herald.templates.restoreVersion(templateId, 1)).serviceFooter, 'full');
    assert.equal(await herald.templates.delete(templateId), undefined);
    assert.equal((await apiError(herald.templates.get(templateId))).code, 'TEMPLATE_NOT_FOUND');
  });

  it('broadcasts: send and get; reporting: analytics, engagement, audience', async () => {
    const accepted = await herald.broadcasts.send({ subject: 'Upgrade', body: 'Tonight', category: 'governance' });
    assert.deepEqual(keys(accepted), ['broadcast_id', 'estimated_delivery_s', 'queued_count', 'total_subscribers']);
    assert.equal(accepted.total_subscribers, 1);
    const broadcast = await herald.broadcasts.get(accepted.broadcast_id);
    assert.equal(broadcast.broadcast_id, accepted.broadcast_id);
    assert.deepEqual(keys(broadcast.counts), ['bounced', 'delivered', 'failed', 'opted_out', 'queued', 'sending']);
    assert.equal((await apiError(herald.broadcasts.get('bcast_missing'))).code, 'BROADCAST_NOT_FOUND');
    const keyed = await herald.broadcasts.send({ subject: 'Keyed', body: 'Once', category: 'governance' }, { idempotencyKey: 'sdk-bcast-1' });
    assert.notEqual(keyed.broadcast_id, accepted.broadcast_id);
    assert.deepEqual(await herald.broadcasts.send({ subject: 'Keyed', body: 'Once', category: 'governance' }, { idempotencyKey: 'sdk-bcast-1' }), keyed);

    const analytics = await herald.reporting.analytics({ period: '90d' });
    assert.deepEqual(keys(analytics), ['bounce_rate', 'breakdown', 'delivery_rate', 'period', 'total_sends']);
    assert.deepEqual(keys(analytics.breakdown), ['bounced', 'delivered', 'failed', 'opted_out']);
    assert.equal(analytics.period, '90d');
    const engagement = await herald.reporting.engagement({ startDate: '2020-01-01', endDate: '2099-12-31' });
    assert.deepEqual(keys(engagement), ['clickRate', 'deliveredEmails', 'endDate', 'openRate', 'startDate', 'unsubscribeRate']);
    assert.equal(engagement.endDate, '2100-01-01T00:00:00.000Z');
    const audience = await herald.reporting.audience();
    assert.deepEqual(keys(audience), ['broadcastableSubscribers', 'channelCoverage', 'registrationTrend', 'totalRegistered']);
    assert.deepEqual(keys(audience.registrationTrend[0]), ['count', 'date']);
    assert.equal((await apiError(herald.reporting.analytics({ period: '1y' as '7d' }))).code, 'VALIDATION_ERROR');
  });
});
