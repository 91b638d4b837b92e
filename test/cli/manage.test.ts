import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyWebhookSignature } from '../../packages/sdk/src/webhooks.js';
import { startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { makeWallet, registeredWallet } from '../support/wallets.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { ensureBuilt, runCli, scratchHome } from './run-cli.js';

describe('herald subscription, wallet, webhook and schedule commands', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let wallet: string;
  let receiver: Receiver;
  let scratch: ReturnType<typeof scratchHome>;
  let env: Record<string, string>;
  const herald = (args: string[], input?: string) => runCli(args, { env, input });
  const ok = async (args: string[], input?: string) => {
    const res = await herald([...args, '--json'], input);
    assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
    return res.json();
  };

  before(async () => {
    ensureBuilt();
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000', HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true', HERALD_WEBHOOK_TIMEOUT_MS: '2000' } });
    acme = await gw.createProtocol({ tier: 3 });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com', telegramChatId: '77' });
    receiver = await startReceiver();
    scratch = scratchHome();
    env = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url, HERALD_API_KEY: acme.apiKey };
  });
  after(async () => {
    await receiver.close();
    await gw.close();
    scratch.cleanup();
  });

  it('subscription add, check and remove', async () => {
    const added = await ok(['subscription', 'add', wallet, '--channels', 'email,telegram']);
    assert.deepEqual(Object.keys(added).sort(), ['channels', 'subscribed', 'subscribedAt', 'unsubscribedAt', 'walletAddress']);
    assert.deepEqual([added.walletAddress, added.subscribed, added.channels, added.unsubscribedAt], [wallet, true, ['email', 'telegram'], null]);
    assert.deepEqual(await ok(['subscription', 'check', wallet]), added);
    assert.match((await herald(['subscription', 'check', wallet])).stdout, /subscribed\s+yes/);

    const removed = await ok(['subscription', 'remove', wallet]);
    assert.equal(removed.subscribed, false);
    assert.ok(removed.unsubscribedAt);
    assert.equal((await ok(['subscription', 'check', wallet])).subscribed, false);

    assert.equal((await herald(['subscription', 'add', wallet, '--channels', 'fax'])).code, 2);
    assert.equal((await herald(['subscription', 'add', wallet])).code, 2, '--channels is required');
    const stranger = await herald(['subscription', 'check', makeWallet().address, '--json']);
    assert.equal(stranger.code, 3);
    assert.equal(stranger.errorJson().error.code, 'WALLET_NOT_REGISTERED');
  });

  it('wallet status shows registration and verified channels only', async () => {
    assert.deepEqual(await ok(['wallet', 'status', wallet]), { registered: true, channels: ['email', 'telegram'] });
    assert.deepEqual(await ok(['wallet', 'status', makeWallet().address]), { registered: false, channels: [] });
    const human = await herald(['wallet', 'status', wallet]);
    assert.match(human.stdout, /registered\s+yes/);
    assert.match(human.stdout, /channels\s+email, telegram/);
    assert.equal((await herald(['wallet', 'status', 'not-a-wallet'])).code, 2);
  });

  it('webhook create, list, test, deliveries, rotate-secret, get, update and delete against a real receiver', async () => {
    const created = await ok(['webhook', 'create', '--url', `${receiver.url}/hooks`, '--events', 'notification.delivered,notification.failed']);
    assert.deepEqual(Object.keys(created).sort(), ['events', 'id', 'isActive', 'secret', 'url']);
    assert.match(created.secret, /^whsec_/);
    assert.deepEqual(created.events, ['notification.delivered', 'notification.failed']);

    const listed = await ok(['webhook', 'list']);
    assert.deepEqual(listed, [{ id: created.id, url: `${receiver.url}/hooks`, events: created.events, isActive: true }]);
    assert.ok(!(await herald(['webhook', 'list'])).stdout.includes(created.secret), 'the secret is never listed');

    assert.deepEqual(await ok(['webhook', 'test', created.id]), { sent: true });
    const [request] = await receiver.waitForRequests(1);
    assert.equal(request.path, '/hooks');
    assert.ok(verifyWebhookSignature(request.body, request.headers['x-service-signature'] as string, created.secret));
    assert.equal(JSON.parse(request.body).type, 'notification.delivered');

    receiver.answer = () => ({ status: 500, body: 'broken' });
    const failing = await herald(['webhook', 'test', created.id, '--json']);
    assert.equal(failing.code, 1);
    assert.deepEqual(failing.json(), { sent: false });
    assert.equal(failing.errorJson().error.code, 'WEBHOOK_TEST_FAILED');

    const deliveries = await ok(['webhook', 'deliveries', created.id]);
    assert.deepEqual(Object.keys(deliveries).sort(), ['data', 'page', 'total']);
    assert.deepEqual(deliveries.data.map((d: any) => [d.status, d.lastStatusCode]), [['failed', 500], ['succeeded', 200]]);

    assert.match((await herald(['webhook', 'deliveries', created.id])).stdout, /^ID\s+EVENT\s+STATUS\s+ATTEMPTS\s+LAST\s+CREATED/);

    receiver.answer = () => ({ status: 200, body: 'ok' });
    const rotated = await ok(['webhook', 'rotate-secret', created.id, '--keep-previous', '600']);
    assert.deepEqual(Object.keys(rotated).sort(), ['events', 'id', 'isActive', 'previousSecretExpiresAt', 'secret', 'url']);
    assert.notEqual(rotated.secret, created.secret);
    const detail = await ok(['webhook', 'get', created.id]);
    assert.equal(detail.previousSecretExpiresAt, rotated.previousSecretExpiresAt);
    const shown = (await herald(['webhook', 'get', created.id])).stdout;
    assert.match(shown, /old secret valid until\s+\d{4}-/);
    // One block: every value starts in the same column.
    const columns = shown.trimEnd().split('\n').map((line) => /^\S+(?: \S+)*\s{2,}/.exec(line)?.[0].length);
    assert.deepEqual(new Set(columns), new Set([columns[0]]), shown);
    const seen = receiver.requests.length;
    assert.deepEqual(await ok(['webhook', 'test', created.id]), { sent: true });
    const signedTwice = receiver.requests[seen];
    for (const secret of [created.secret, rotated.secret]) assert.ok(verifyWebhookSignature(signedTwice.body, signedTwice.headers['x-service-signature'] as string, secret));
    assert.equal((await herald(['webhook', 'rotate-secret', created.id, '--keep-previous', '-1'])).code, 2);
    const human = await herald(['webhook', 'rotate-secret', created.id, '--keep-previous', '0']);
    assert.match(human.stdout, /secret\s+whsec_/);
    assert.match(human.stdout, /old secret valid until\s+no longer valid/);

    const paused = await ok(['webhook', 'update', created.id, '--no-active', '--events', 'quota.exceeded']);
    assert.deepEqual([paused.isActive, paused.events], [false, ['quota.exceeded']]);
    assert.equal((await herald(['webhook', 'update', created.id])).code, 2, 'nothing to change');
    assert.equal((await herald(['webhook', 'create', '--url', receiver.url, '--events', 'nope'])).code, 2);

    const unconfirmed = await herald(['webhook', 'delete', created.id]);
    assert.equal(unconfirmed.code, 2);
    assert.match(unconfirmed.stderr, /--yes/);
    assert.deepEqual(await ok(['webhook', 'delete', created.id, '--yes']), { deleted: true, id: created.id });
    assert.deepEqual(await ok(['webhook', 'list']), []);
    assert.equal((await herald(['webhook', 'test', created.id])).code, 3);
  });

  it('schedule once, cron, list, get and cancel', async () => {
    const once = await ok(['schedule', 'once', '--wallet', wallet, '--subject', 'Vote', '--body', 'Voting opens', '--category', 'governance', '--at', '2030-06-01T09:00', '--timezone', 'America/New_York']);
    assert.deepEqual(Object.keys(once).sort(), ['id', 'nextRunAt', 'status']);
    assert.deepEqual([once.status, once.nextRunAt], ['PENDING', '2030-06-01T13:00:00Z']);

    const stdin = JSON.stringify({ wallet, subject: 'Weekly', body: 'Digest', category: 'defi', cronExpr: '0 9 * * MON', timezone: 'Europe/Berlin' });
    const cron = await ok(['schedule', 'cron', '--from-stdin'], stdin);
    assert.equal(cron.status, 'PENDING');

    const list = await ok(['schedule', 'list']);
    assert.deepEqual(Object.keys(list).sort(), ['items', 'total']);
    assert.deepEqual(Object.keys(list.items[0]).sort(), ['id', 'nextRunAt', 'status', 'subject', 'wallet']);
    assert.deepEqual(list.items.map((s: any) => s.id).sort(), [once.id, cron.id].sort());

    const record = await ok(['schedule', 'get', cron.id]);
    assert.deepEqual([record.kind, record.cronExpr, record.timezone, record.scheduledFor], ['cron', '0 9 * * MON', 'Europe/Berlin', null]);
    assert.match((await herald(['schedule', 'get', once.id])).stdout, /kind\s+once at 2030-06-01T09:00:00/);

    assert.deepEqual(await ok(['schedule', 'cancel', once.id]), { cancelled: true });
    assert.deepEqual(await ok(['schedule', 'cancel', once.id]), { cancelled: false });
    assert.match((await herald(['schedule', 'list'])).stdout, new RegExp(`${once.id}\\s+CANCELLED`));

    const message = ['--wallet', wallet, '--subject', 's', '--body', 'b', '--category', 'defi'];
    const missing = await herald(['schedule', 'once', ...message]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /scheduledFor is required \(--at\)/);
    const badZone = await herald(['schedule', 'once', ...message, '--at', '2030-01-01T00:00', '--timezone', 'Mars/Olympus', '--json']);
    assert.equal(badZone.code, 2);
    assert.equal(badZone.errorJson().error.code, 'VALIDATION_ERROR');
    assert.equal((await herald(['schedule', 'cancel', 'sched_missing'])).code, 3);
  });
});
