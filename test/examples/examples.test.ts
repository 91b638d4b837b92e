/**
 * Every file of examples/ runs against a live gateway (Growth-tier protocols, wallets registered
 * through the admin import, the capture provider delivering): once as a child process, exactly as
 * its opening comment tells a user to run it, and for its other cases through its exported
 * `main(env)`. The assertions check what really happened: delivered notifications, stored
 * subscriptions, signed webhook requests, the CLI's exit codes. The serverless handler is called
 * with Requests, and every file type-checks. So no example can go stale.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Herald, signWebhookPayload } from '../../packages/sdk/src/client.js';
import { exampleSummary } from '../../packages/server/src/mcp/assemble-herald-context.js';
import { INTEGRATION_PATTERNS } from '../../packages/server/src/mcp/load-docs-library.js';
import { closedPort, ensureBuilt, ROOT, scratchHome } from '../cli/run-cli.js';
import { startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { makeWallet, registeredWallet } from '../support/wallets.js';
import { baseEnv, callMain, runExample, startLongRunning } from './run-example.js';

const BAD_KEY = `hrld_live_${'x'.repeat(40)}`;
const EMAIL_AND_TELEGRAM = { email: 'holder@example.com', telegramChatId: '424242' };

describe('examples/ against a live gateway', () => {
  let gw: TestGateway;
  let scratch: ReturnType<typeof scratchHome>;
  let typecheck: Promise<{ stdout: string; stderr: string }>;

  before(async () => {
    ensureBuilt();
    // Started now, awaited by the last test: it overlaps the example runs.
    typecheck = promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'examples/tsconfig.json'], { cwd: ROOT });
    typecheck.catch(() => {}); // reported by the last test
    gw = await startGateway({ env: { HERALD_WORKER_POLL_MS: '50', HERALD_IP_RATE_LIMIT: '10000', HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    scratch = scratchHome();
  });
  after(async () => {
    await gw?.close();
    scratch?.cleanup();
  });

  /** A Growth-tier protocol of its own for each example, so rate limits and lists never mix. */
  const growth = (name: string) => gw.createProtocol({ tier: 1, name });
  const sdk = (key: string) => new Herald({ apiKey: key, baseUrl: gw.url });
  const envFor = (protocol: Pick<TestProtocol, 'apiKey'>, extra: Record<string, string> = {}) => ({
    ...baseEnv(scratch.home, scratch.config),
    HERALD_BASE_URL: gw.url,
    HERALD_API_KEY: protocol.apiKey,
    ...extra,
  });
  const delivered = (key: string, id: string) =>
    waitFor(async () => {
      const record = await sdk(key).notifications.get(id);
      return record.status === 'delivered' ? record : undefined;
    });

  it('has a file for every pattern, each opening with a comment that says what it shows', () => {
    for (const pattern of INTEGRATION_PATTERNS) {
      const source = readFileSync(path.join(ROOT, 'examples', `${pattern}.ts`), 'utf8');
      assert.match(source, /^\/\*\*\n/, pattern);
      assert.ok(exampleSummary(source).length > 40, pattern);
      assert.match(source, /export async function main\(/, pattern);
    }
  });

  it('backend: notifies once per event, follows it to delivery, and treats an unregistered wallet as an outcome', async () => {
    const acme = await growth('Backend');
    const wallet = await registeredWallet(gw.url, EMAIL_AND_TELEGRAM);
    const env = envFor(acme, { HERALD_WALLET: wallet, EVENT_ID: 'evt-1', POSITION_ID: 'pos-7' });

    const first = await runExample('backend', env);
    assert.equal(first.code, 0, first.stderr);
    const result = first.json();
    assert.equal(result.outcome, 'delivered');
    assert.equal(result.duplicate, false);
    const record = await sdk(acme.apiKey).notifications.get(result.notificationId);
    assert.deepEqual([record.status, record.priority, record.category, record.subject], ['delivered', 'critical', 'defi', 'Position pos-7 is close to liquidation']);
    assert.equal(result.channel, record.delivery_channel);

    const again = await callMain('backend', env);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(again.json(), { ...result, duplicate: true });
    assert.equal((await sdk(acme.apiKey).notifications.list({ wallet })).total, 1);

    // a new event: its key was never used (a used one would answer for its own send, or 409)
    const stranger = await callMain('backend', { ...env, HERALD_WALLET: makeWallet().address, EVENT_ID: 'evt-2' });
    assert.equal(stranger.code, 0, stranger.stderr);
    assert.deepEqual(stranger.json(), { outcome: 'not_registered' });
    // Without EVENT_ID, the demo event is the wallet's own: another wallet does not reuse a key.
    const { EVENT_ID: _event, POSITION_ID: _position, ...defaults } = env;
    assert.equal((await callMain('backend', defaults)).code, 0);
    const other = await callMain('backend', { ...defaults, HERALD_WALLET: makeWallet().address });
    assert.equal(other.code, 0, other.stderr);
    assert.deepEqual(other.json(), { outcome: 'not_registered' });

    const refused = await callMain('backend', { ...env, HERALD_API_KEY: BAD_KEY });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /INVALID_API_KEY, HTTP 401/);
    const unset = await callMain('backend', { ...env, HERALD_WALLET: '' });
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /HERALD_WALLET/);
  });

  it('serverless: the handler answers Requests, sends once per Idempotency-Key and maps Herald errors', async () => {
    const { handler, default: worker } = await import('../../examples/serverless.js');
    const acme = await growth('Serverless');
    const wallet = await registeredWallet(gw.url, EMAIL_AND_TELEGRAM);
    const env = { HERALD_API_KEY: acme.apiKey, HERALD_BASE_URL: gw.url };
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      new Request('https://fn.example.com/notify', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const message = { wallet, subject: 'Withdrawal complete', body: 'The funds are in your wallet.', category: 'defi' };

    const sent = await handler(post(message, { 'idempotency-key': 'wd-1' }), env);
    assert.equal(sent.status, 202);
    const accepted = await sent.json();
    assert.equal(accepted.status, 'queued');
    assert.ok(['email', 'telegram'].includes(accepted.deliveryChannel));
    await delivered(acme.apiKey, accepted.notificationId);

    const repeat = await worker.fetch(post(message, { 'idempotency-key': 'wd-1' }), env);
    assert.equal(repeat.status, 202);
    assert.deepEqual(await repeat.json(), { notificationId: accepted.notificationId, status: 'duplicate', deliveryChannel: null });
    const conflict = await handler(post({ ...message, subject: 'Other' }, { 'idempotency-key': 'wd-1' }), env);
    assert.equal(conflict.status, 409);
    assert.equal((await conflict.json()).code, 'DUPLICATE_IDEMPOTENCY_KEY');

    const answers = async (request: Request, handlerEnv: Record<string, string> = env) => {
      const response = await handler(request, handlerEnv);
      return [response.status, await response.json()];
    };
    assert.deepEqual(await answers(new Request('https://fn.example.com/notify')), [405, { error: 'Use POST' }]);
    assert.deepEqual(await answers(post('{not json')), [400, { error: 'The body must be JSON' }]);
    assert.deepEqual(await answers(post({ ...message, subject: '' })), [400, { error: 'subject must be a non-empty string' }]);
    const [badWallet, badWalletBody] = await answers(post({ ...message, wallet: 'not-a-wallet' }));
    assert.deepEqual([badWallet, badWalletBody.code], [400, 'VALIDATION_ERROR']);
    const [unknown, unknownBody] = await answers(post({ ...message, wallet: makeWallet().address }));
    assert.deepEqual([unknown, unknownBody.code], [404, 'WALLET_NOT_REGISTERED']);
    assert.deepEqual(await answers(post(message), { HERALD_BASE_URL: gw.url }), [500, { error: 'HERALD_API_KEY is not configured' }]);
    const originalError = console.error;
    console.error = () => {};
    try {
      const [misconfigured, misconfiguredBody] = await answers(post(message), { ...env, HERALD_API_KEY: BAD_KEY });
      assert.deepEqual([misconfigured, misconfiguredBody], [500, { error: 'Notification service misconfigured' }]);
    } finally {
      console.error = originalError;
    }
    const down = await answers(post(message), { ...env, HERALD_BASE_URL: `http://127.0.0.1:${await closedPort()}` });
    assert.deepEqual(down, [502, { error: 'Notification service unreachable' }]);
    assert.equal((await sdk(acme.apiKey).notifications.list({ wallet })).total, 1);

    const run = await runExample('serverless', envFor(acme, { HERALD_WALLET: wallet }));
    assert.equal(run.code, 0, run.stderr);
    const invoked = run.json();
    assert.equal(invoked.status, 202);
    await delivered(acme.apiKey, invoked.body.notificationId);
    // Each run's sample request has a key of its own, so another wallet is no conflict; the same
    // IDEMPOTENCY_KEY twice is answered as a duplicate of the first.
    const other = await registeredWallet(gw.url, EMAIL_AND_TELEGRAM);
    const keyed = { HERALD_WALLET: other, IDEMPOTENCY_KEY: `serverless-${Date.now()}` };
    const first = await runExample('serverless', envFor(acme, keyed));
    assert.equal(first.code, 0, first.stderr);
    const again = await runExample('serverless', envFor(acme, keyed));
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json().body.status, 'duplicate');
    assert.equal(again.json().body.notificationId, first.json().body.notificationId);
  });

  it('webhook: verifies real signed events from the gateway, answers 401 to forged ones, handles each event once', async () => {
    const acme = await growth('Webhook');
    // The receiver needs the secret to start and the webhook needs the receiver's address: create
    // it first, then point it at the port the receiver got.
    const hook = await sdk(acme.apiKey).webhooks.create({ url: 'http://127.0.0.1:9/herald', events: ['notification.delivered'] });
    const receiver = startLongRunning('webhook', { ...baseEnv(scratch.home, scratch.config), HERALD_WEBHOOK_SECRET: hook.secret, PORT: '0', HOST: '127.0.0.1' });
    try {
      const { listening: url } = await receiver.waitForLine((line) => line.listening);
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/herald$/);
      assert.equal((await sdk(acme.apiKey).webhooks.update(hook.id, { url })).url, url);

      assert.deepEqual(await sdk(acme.apiKey).webhooks.test(hook.id), { sent: true });
      const test = await receiver.waitForLine((line) => line.handled && line.notificationId?.startsWith('test_'));
      assert.equal(test.type, 'notification.delivered');

      const wallet = await registeredWallet(gw.url, { email: 'hooked@example.com' });
      const sent = await sdk(acme.apiKey).notifications.send({ wallet, subject: 'Hook', body: 'b', category: 'system' });
      const real = await receiver.waitForLine((line) => line.handled && line.notificationId === sent.notificationId);
      assert.deepEqual([real.type, real.wallet, real.channel], ['notification.delivered', wallet, 'email']);

      const body = JSON.stringify({ id: 'evt_forged', type: 'notification.delivered', created: Math.floor(Date.now() / 1000), data: { notification_id: 'n1' } });
      const deliver = (payload: string, signature?: string, method = 'POST', target = url) =>
        fetch(target, { method, headers: { 'content-type': 'application/json', ...(signature ? { 'x-service-signature': signature } : {}) }, body: method === 'POST' ? payload : undefined });
      const tampered = body.replace('"n1"', '"n2"');
      assert.equal((await deliver(tampered, signWebhookPayload(body, hook.secret))).status, 401);
      assert.equal((await deliver(body, signWebhookPayload(body, 'whsec_not_the_secret'))).status, 401);
      assert.equal((await deliver(body)).status, 401);
      assert.equal((await deliver(body, signWebhookPayload(body, hook.secret, Math.floor(Date.now() / 1000) - 3600))).status, 401);
      assert.equal((await deliver(body, signWebhookPayload(body, hook.secret), 'GET')).status, 405);
      assert.equal((await deliver(body, signWebhookPayload(body, hook.secret), 'POST', url.replace('/herald', '/other'))).status, 404);
      assert.ok(!receiver.lines.some((line) => line.handled === 'evt_forged'));

      // A replay from the delivery log sends the same event again: acknowledged, not handled twice.
      const { data } = await sdk(acme.apiKey).webhooks.deliveries(hook.id);
      const testDelivery = data.find((d) => String(d.event.data.notification_id).startsWith('test_'))!;
      await sdk(acme.apiKey).webhooks.retryDelivery(hook.id, testDelivery.id);
      await receiver.waitForLine((line) => line.duplicate === testDelivery.eventId);
      const replayed = await waitFor(async () => {
        const page = await sdk(acme.apiKey).webhooks.deliveries(hook.id);
        const delivery = page.data.find((d) => d.id === testDelivery.id)!;
        return delivery.attempts.length === 2 && delivery.status === 'succeeded' ? delivery : undefined;
      });
      assert.deepEqual(replayed.attempts.map((a) => a.statusCode), [200, 200]);
      assert.equal(receiver.lines.filter((line) => line.handled === testDelivery.eventId).length, 1);
    } finally {
      assert.equal(await receiver.stop('SIGTERM'), 0, receiver.stderr());
    }
    const unset = await callMain('webhook', baseEnv(scratch.home, scratch.config));
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /HERALD_WEBHOOK_SECRET/);
  });

  it('batch: sends in chunks of 100 with per-item keys, reports every item, and a re-run sends nothing', async () => {
    const acme = await growth('Batch');
    const registered: string[] = [];
    for (let group = 0; group < 6; group++) {
      registered.push(...(await Promise.all(Array.from({ length: 17 }, () => registeredWallet(gw.url, { email: 'bulk@example.com' })))));
    }
    const strangers = [makeWallet().address, makeWallet().address];
    const wallets = [strangers[0], ...registered.slice(0, 100), strangers[1], ...registered.slice(100)];
    const env = envFor(acme, { HERALD_WALLETS: wallets.join(','), CAMPAIGN_ID: 'airdrop-7' });

    const first = await runExample('batch', env);
    assert.equal(first.code, 0, first.stderr);
    const report = first.json();
    assert.deepEqual([report.campaign, report.total, report.requests, report.counts], ['airdrop-7', 104, 2, { queued: 102, failed: 2 }]);
    assert.deepEqual(report.items.map((item: any) => item.wallet), wallets);
    assert.deepEqual(report.items.filter((item: any) => item.status === 'failed').map((item: any) => item.wallet), strangers);
    await waitFor(async () => (await sdk(acme.apiKey).notifications.list({ status: 'delivered', limit: 1 })).total === 102, 20_000);

    const again = await callMain('batch', env);
    assert.equal(again.code, 0, again.stderr);
    const repeat = again.json();
    assert.deepEqual(repeat.counts, { duplicate: 104 });
    assert.deepEqual(repeat.items.map((item: any) => item.notificationId), report.items.map((item: any) => item.notificationId));
    assert.equal((await sdk(acme.apiKey).account.getUsage()).usage, 102);

    const refused = await callMain('batch', { ...env, CAMPAIGN_ID: 'airdrop-8', HERALD_WALLETS: ['not-a-wallet', ...registered.slice(0, 100)].join(',') });
    assert.equal(refused.code, 1);
    const partial = refused.json();
    assert.deepEqual(partial.counts, { error: 100, not_sent: 1 });
    assert.equal(partial.items[0].error.code, 'VALIDATION_ERROR');
    assert.match(refused.stderr, /run again with the same CAMPAIGN_ID/);
    assert.equal((await sdk(acme.apiKey).account.getUsage()).usage, 102);
  });

  it('registration-check: sends on the preferred channel when verified, lets Herald choose otherwise, invites the unregistered', async () => {
    const acme = await growth('Registration check');
    const both = await registeredWallet(gw.url, EMAIL_AND_TELEGRAM);
    const emailOnly = await registeredWallet(gw.url, { email: 'only@example.com' });
    const stranger = makeWallet().address;
    const env = envFor(acme, { HERALD_WALLETS: [both, emailOnly, stranger].join(' '), PREFERRED_CHANNEL: 'telegram' });

    const run = await runExample('registration-check', env);
    assert.equal(run.code, 0, run.stderr);
    const [first, second, third] = run.json().decisions;
    assert.deepEqual([first.wallet, first.action, first.status, first.channel], [both, 'sent', 'queued', 'telegram']);
    // No Telegram verified: no hint, Herald picks among the verified channels.
    assert.deepEqual([second.wallet, second.action, second.channel], [emailOnly, 'sent', 'email']);
    assert.deepEqual(third, { wallet: stranger, action: 'invite' });
    assert.equal((await delivered(acme.apiKey, first.notificationId)).delivery_channel, 'telegram');
    assert.equal((await delivered(acme.apiKey, second.notificationId)).delivery_channel, 'email');
    assert.equal((await sdk(acme.apiKey).notifications.list({ wallet: stranger })).total, 0);

    const badChannel = await callMain('registration-check', { ...env, PREFERRED_CHANNEL: 'fax' });
    assert.equal(badChannel.code, 2);
    const badWallet = await callMain('registration-check', { ...env, HERALD_WALLETS: `${emailOnly},not-a-wallet` });
    assert.equal(badWallet.code, 1);
    assert.equal(badWallet.json().decisions.length, 1);
    assert.match(badWallet.stderr, /Stopped after 1 of 2 wallets/);
  });

  it('broadcast: subscribes the registered wallets, broadcasts, and follows the counts until all are final', async () => {
    const acme = await growth('Broadcast');
    const email = await registeredWallet(gw.url, { email: 'b1@example.com' });
    const telegram = await registeredWallet(gw.url, { telegramChatId: '777' });
    const smsOnly = await registeredWallet(gw.url, { phone: '+15555550177' });
    const stranger = makeWallet().address;
    const env = envFor(acme, { HERALD_WALLETS: [email, telegram, smsOnly, stranger].join(','), CHANNELS: 'email,telegram' });

    const run = await runExample('broadcast', env);
    assert.equal(run.code, 0, run.stderr);
    const { subscribed, skipped, broadcast } = run.json();
    assert.deepEqual(subscribed, [email, telegram, smsOnly]);
    assert.deepEqual(skipped, [{ wallet: stranger, reason: 'not registered' }]);
    // The SMS-only wallet subscribed on channels it has not verified: a subscriber, but unreachable.
    assert.deepEqual([broadcast.total_subscribers, broadcast.queued_count], [3, 2]);
    assert.deepEqual(broadcast.counts, { queued: 0, sending: 0, delivered: 2, bounced: 0, failed: 1, opted_out: 0 });
    assert.match(run.stderr, new RegExp(`Broadcast ${broadcast.broadcast_id}: 2 of 3 subscribers queued`));
    const stored = await sdk(acme.apiKey).broadcasts.get(broadcast.broadcast_id);
    assert.equal(stored.counts.delivered, 2);
    // Run again with the same announcement key: the first broadcast, nobody messaged twice.
    const again = await runExample('broadcast', env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json().broadcast.broadcast_id, broadcast.broadcast_id);
    assert.equal((await sdk(acme.apiKey).notifications.list({ limit: 100 })).total, 3);
    assert.deepEqual((await sdk(acme.apiKey).subscriptions.get(email)).channels, ['email', 'telegram']);

    const developer = await gw.createProtocol({ tier: 0, name: 'Developer' });
    const below = await callMain('broadcast', envFor(developer, { HERALD_WALLETS: email }));
    assert.equal(below.code, 1);
    assert.match(below.stderr, /Broadcasts need the Growth tier or above/);
  });

  it('subscribe: subscribes on the verified channels asked for, checks, unsubscribes; later sends are opted out', async () => {
    const acme = await growth('Subscribe');
    const wallet = await registeredWallet(gw.url, EMAIL_AND_TELEGRAM);
    const run = await runExample('subscribe', envFor(acme, { HERALD_WALLET: wallet, CHANNELS: 'email,sms' }));
    assert.equal(run.code, 0, run.stderr);
    const steps = run.lines();
    assert.deepEqual(
      steps.map((s) => s.step),
      ['subscribed', 'checked', 'unsubscribed', 'checked'],
    );
    assert.deepEqual(steps[0].channels, ['email']);
    assert.deepEqual([steps[1].subscribed, steps[3].subscribed], [true, false]);
    const subscription = await sdk(acme.apiKey).subscriptions.get(wallet);
    assert.equal(subscription.subscribed, false);
    assert.equal(subscription.unsubscribedAt, steps[2].unsubscribedAt);
    const after = await sdk(acme.apiKey).notifications.send({ wallet, subject: 'Still there?', body: 'b', category: 'marketing' });
    assert.equal(after.status, 'opted_out');

    const stranger = await callMain('subscribe', envFor(acme, { HERALD_WALLET: makeWallet().address }));
    assert.equal(stranger.code, 1);
    assert.match(stranger.stderr, /is not registered with Herald/);
  });

  it('cli-send: herald notify send --wait --json from a script, passing the exit codes on', async () => {
    const acme = await growth('CLI send');
    const wallet = await registeredWallet(gw.url, EMAIL_AND_TELEGRAM);
    const env = envFor(acme, { HERALD_WALLET: wallet, WITHDRAWAL_ID: 'wd-1' });

    const first = await runExample('cli-send', env);
    assert.equal(first.code, 0, first.stderr);
    const [, id, channel] = /^Delivered (\S+) by (\w+)\n$/.exec(first.stdout) ?? [];
    const record = await sdk(acme.apiKey).notifications.get(id);
    assert.deepEqual([record.status, record.delivery_channel, record.subject], ['delivered', channel, 'Withdrawal wd-1 processed']);

    const again = await callMain('cli-send', env);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, `Delivered ${id} by ${channel} (already sent by an earlier run)\n`);

    const stranger = await callMain('cli-send', { ...env, HERALD_WALLET: makeWallet().address, WITHDRAWAL_ID: 'wd-2' });
    assert.equal(stranger.code, 3);
    assert.match(stranger.stderr, /is not registered with Herald: nothing sent \(WALLET_NOT_REGISTERED\)/);
    const refused = await callMain('cli-send', { ...env, HERALD_API_KEY: BAD_KEY });
    assert.equal(refused.code, 4);
    assert.match(refused.stderr, /^Check HERALD_API_KEY/);
    const down = await callMain('cli-send', { ...env, HERALD_BASE_URL: `http://127.0.0.1:${await closedPort()}`, HERALD_MAX_RETRIES: '0' });
    assert.equal(down.code, 6);
    assert.match(down.stderr, /NETWORK_CONNECTION_REFUSED/);
  });

  it('cli-agent: doctor first, then each task with --json, branching on exit codes', async () => {
    const acme = await growth('CLI agent');
    const first = await registeredWallet(gw.url, EMAIL_AND_TELEGRAM);
    const tasks = [
      { id: 't1', wallet: first, subject: 'Rewards claimed', body: 'Restaked.', category: 'defi' },
      { id: 't2', wallet: 'not-a-wallet', subject: 'x', body: 'y' },
      { id: 't3', wallet: makeWallet().address, subject: 'x', body: 'y' },
    ];
    const file = path.join(scratch.home, 'tasks.json');
    writeFileSync(file, JSON.stringify(tasks));
    const env = envFor(acme);

    const run = await runExample('cli-agent', env, [file]);
    assert.equal(run.code, 0, run.stderr);
    const report = run.json();
    assert.equal(report.ready, true);
    assert.deepEqual(
      report.tasks.map((t: any) => [t.id, t.outcome]),
      [['t1', 'delivered'], ['t2', 'invalid'], ['t3', 'unregistered']],
    );
    assert.match(report.tasks[1].detail, /^VALIDATION_ERROR/);
    const record = await sdk(acme.apiKey).notifications.get(report.tasks[0].notificationId);
    assert.deepEqual([record.status, record.category, record.subject], ['delivered', 'defi', 'Rewards claimed']);
    assert.equal((await sdk(acme.apiKey).notifications.list()).total, 1);

    const refused = await callMain('cli-agent', { ...env, HERALD_API_KEY: BAD_KEY }, [file]);
    assert.equal(refused.code, 4);
    assert.deepEqual([refused.json().ready, refused.json().stopped.exitCode, refused.json().tasks], [false, 4, []]);
    const down = await callMain('cli-agent', { ...env, HERALD_BASE_URL: `http://127.0.0.1:${await closedPort()}` }, [file]);
    assert.equal(down.code, 6);
    assert.match(down.json().stopped.reason, /the gateway stayed unreachable/);
  });

  it('type-checks every example', async () => {
    const problems = await typecheck.then(
      () => '',
      (error: { stdout?: string; stderr?: string; message: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message,
    );
    assert.equal(problems, '', `tsc -p examples/tsconfig.json:\n${problems}`);
  });
});
