import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createDeliveryWorker } from '../../packages/server/src/delivery/worker.js';
import { ADMIN_TOKEN, call, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { makeWallet, registeredWallet } from '../support/wallets.js';
import { startLossyProxy } from './lossy-proxy.js';
import { ensureBuilt, runCli, scratchHome } from './run-cli.js';

const SUBMISSION_KEYS = ['deliveryChannel', 'environment', 'estimatedDeliveryMs', 'notificationId', 'recipientRegistered', 'status'];

// The gateway runs no delivery worker (api role): each test that needs deliveries runs one, so
// what stays queued, and when, is up to the test.
describe('herald notify', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let wallet: string;
  let scratch: ReturnType<typeof scratchHome>;
  let env: Record<string, string>;
  const herald = (args: string[], input?: string) => runCli(args, { env, input });
  const message = (extra: string[] = []) => ['--wallet', wallet, '--subject', 'Health factor', '--body', 'Your **health factor** is 1.05', '--category', 'defi', ...extra];

  async function withWorker<T>(work: () => Promise<T>): Promise<T> {
    const worker = createDeliveryWorker(gw.herald.deps, { ...gw.herald.deps.config.delivery, idleMs: 50 });
    worker.start();
    try {
      return await work();
    } finally {
      await worker.stop();
    }
  }
  const countSent = async () => (await call(gw.url, acme.apiKey, 'GET', '/v1/notifications?limit=1')).body.total as number;

  before(async () => {
    ensureBuilt();
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
    scratch = scratchHome();
    env = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url, HERALD_API_KEY: acme.apiKey };
  });
  after(async () => {
    await gw.close();
    scratch.cleanup();
  });

  it('send --json prints the submission; status --json prints the record exactly as the API', async () => {
    const sent = await herald(['notify', 'send', ...message(['--priority', 'important', '--preferred-channel', 'email']), '--json']);
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(sent.stderr, '');
    const submission = sent.json();
    assert.deepEqual(Object.keys(submission).sort(), SUBMISSION_KEYS);
    assert.deepEqual([submission.status, submission.deliveryChannel, submission.environment, submission.recipientRegistered], ['queued', 'email', 'production', true]);

    const status = await herald(['notify', 'status', submission.notificationId, '--json']);
    assert.equal(status.code, 0, status.stderr);
    const api = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${submission.notificationId}`);
    assert.deepEqual(status.json(), api.body);
    assert.deepEqual([api.body.subject, api.body.priority, api.body.preferred_channel], ['Health factor', 'important', 'email']);

    const human = await herald(['notify', 'status', submission.notificationId]);
    assert.match(human.stdout, new RegExp(`id\\s+${submission.notificationId}`));
    assert.match(human.stdout, /status\s+queued/);
  });

  it('send --wait blocks until the capture provider delivered, and exits 0', async () => {
    const res = await withWorker(() => herald(['notify', 'send', ...message(), '--wait', '--wait-timeout', '20s', '--json']));
    assert.equal(res.code, 0, res.stderr);
    const { submission, notification } = res.json();
    assert.deepEqual(Object.keys(submission).sort(), SUBMISSION_KEYS);
    assert.equal(notification.notification_id, submission.notificationId);
    assert.equal(notification.status, 'delivered');
    assert.equal(notification.delivery_channel, 'email');
    assert.equal(notification.attempts[0].provider, 'capture');

    const human = await withWorker(() => herald(['notify', 'send', ...message(), '--wait']));
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /Delivered notification \w+ by email/);
    assert.match(human.stderr, /^Queued \w+ \(queued\) with idempotency key cli_\S+ \(generated\); waiting up to 60 s for delivery/m);
    assert.doesNotMatch(human.stderr, /\([^()]*\(/, 'no parentheses within parentheses');
  });

  it('send --wait exits 1 when delivery fails, printing the final record', async () => {
    const doomed = await registeredWallet(gw.url, { email: 'doomed@example.com' });
    const running = herald(['notify', 'send', ...message(), '--wallet', doomed, '--wait', '--wait-timeout', '20s', '--json']);
    await waitFor(async () => (await call(gw.url, acme.apiKey, 'GET', `/v1/notifications?wallet=${doomed}`)).body.total === 1);
    // The address goes before any worker runs, so the delivery finds no contact and fails for good.
    assert.equal((await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/identities', { wallet: doomed, email: null })).status, 201);
    const res = await withWorker(() => running);
    assert.equal(res.code, 1, res.stderr);
    assert.equal(res.json().notification.status, 'failed');
    const { error } = res.errorJson();
    assert.equal(error.code, 'NOT_DELIVERED');
    assert.match(error.message, /failed: the wallet no longer has a verified email contact/);
  });

  it('send --wait exits 1 with WAIT_TIMEOUT when nothing final happens in time', async () => {
    const started = Date.now();
    const res = await herald(['notify', 'send', ...message(), '--wait', '--wait-timeout', '700ms', '--json']);
    assert.equal(res.code, 1, res.stderr);
    assert.ok(Date.now() - started >= 700);
    assert.equal(res.json().notification.status, 'queued');
    const { error } = res.errorJson();
    assert.equal(error.code, 'WAIT_TIMEOUT');
    assert.match(error.message, /still queued after 700 ms; check later with `herald notify status \w+`/);
    // The send was accepted: the key that makes running the command again safe is named.
    assert.match(error.idempotencyKey, /^cli_[0-9a-f-]{36}$/);
    const [stored] = await gw.herald.deps.db.query<{ idempotency_key: string }>('SELECT idempotency_key FROM notifications WHERE id = $1', [res.json().submission.notificationId]);
    assert.equal(stored.idempotency_key, error.idempotencyKey);

    const human = await herald(['notify', 'send', ...message(), '--wait', '--wait-timeout', '300ms', '--idempotency-key', 'timed-out-1']);
    assert.equal(human.code, 1);
    assert.match(human.stdout, /idempotency key\s+timed-out-1$/m);
    assert.match(human.stderr, /Re-running with --idempotency-key timed-out-1 does not send it twice/);
  });

  it('Ctrl-C during --wait still prints the accepted submission, and a CANCELLED error naming the key', async () => {
    let id: string | undefined;
    const accepted = (child: import('node:child_process').ChildProcess) =>
      waitFor(async () => {
        const list = await call(gw.url, acme.apiKey, 'GET', '/v1/notifications?limit=1');
        const [latest] = list.body.data;
        if (latest?.subject !== 'Interrupted' || latest.notification_id === id) return undefined;
        id = latest.notification_id;
        // Give the CLI a moment to read the answer and start waiting.
        await new Promise((resolve) => setTimeout(resolve, 300));
        return child.kill('SIGINT');
      });
    const res = await runCli(['notify', 'send', ...message(['--subject', 'Interrupted']), '--wait', '--json'], { env, whileRunning: accepted });
    assert.equal(res.code, 2, res.stderr);
    const out = res.json();
    assert.equal(out.submission.notificationId, id);
    assert.equal(out.submission.status, 'queued');
    assert.equal(out.notification, null);
    const { error } = res.errorJson();
    assert.equal(error.code, 'CANCELLED');
    assert.equal(error.exitCode, 2);
    assert.match(error.message, new RegExp(`^Cancelled: notification ${id} was accepted \\(queued\\); waiting for its outcome was stopped`));
    assert.match(error.idempotencyKey, /^cli_/);

    const human = await runCli(['notify', 'send', ...message(['--subject', 'Interrupted']), '--wait'], { env, whileRunning: accepted });
    assert.equal(human.code, 2);
    assert.match(human.stdout, new RegExp(`Queued notification ${id}`));
    assert.match(human.stdout, /idempotency key\s+cli_\S+ \(generated\)/);
    assert.match(human.stderr, /Error: Cancelled: notification \w+ was accepted/);
    assert.match(human.stderr, /Re-running with --idempotency-key cli_\S+ does not send it twice/);
  });

  it('send --wait still prints the accepted submission when the gateway goes away during the wait', async () => {
    const lost = await startGateway({ env: { HERALD_ROLE: 'api' } });
    const owner = await lost.createProtocol({ tier: 3, name: 'Gone' });
    const holder = await registeredWallet(lost.url, { email: 'gone@example.com' });
    const running = runCli(['notify', 'send', ...message(), '--wallet', holder, '--wait', '--max-retries', '0', '--json'], {
      env: { ...env, HERALD_BASE_URL: lost.url, HERALD_API_KEY: owner.apiKey },
    });
    await waitFor(async () => (await call(lost.url, owner.apiKey, 'GET', '/v1/notifications')).body.total === 1);
    await lost.close();
    const res = await running;
    assert.equal(res.code, 6, res.stderr);
    const out = res.json();
    assert.equal(out.submission.status, 'queued');
    // The record as last read: a read may have answered before the gateway went.
    if (out.notification !== null) assert.equal(out.notification.notification_id, out.submission.notificationId);
    const { error } = res.errorJson();
    assert.equal(error.code, 'WAIT_FAILED');
    assert.match(error.message, new RegExp(`^Notification ${out.submission.notificationId} was accepted \\(queued\\), but waiting for its outcome failed`));
    assert.match(error.idempotencyKey, /^cli_[0-9a-f-]{36}$/, 'the key to run the command again with');
  });

  it('send --wait that fails after reads answered prints the record as last read', async () => {
    const proxy = await startLossyProxy(gw.url);
    const reads = () => proxy.seen.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/notifications/')).length;
    try {
      // A few reads answer through the proxy (the notification stays queued: no worker runs), then it goes.
      const res = await runCli(['notify', 'send', ...message(), '--wait', '--wait-timeout', '30s', '--max-retries', '0', '--json'], {
        env: { ...env, HERALD_BASE_URL: proxy.url },
        whileRunning: () => waitFor(async () => reads() >= 3).then(() => proxy.close()),
      });
      assert.equal(res.code, 6, res.stderr);
      const out = res.json();
      assert.ok(out.notification, 'the record as last read, not null');
      assert.equal(out.notification.notification_id, out.submission.notificationId);
      assert.equal(out.notification.status, 'queued');
      const { error } = res.errorJson();
      assert.equal(error.code, 'WAIT_FAILED');
      assert.match(error.idempotencyKey, /^cli_/);
    } finally {
      await proxy.close().catch(() => {});
    }
  });

  it('send --wait exits 5 with WAIT_FAILED when the rate limit refuses its reads until the time runs out', async () => {
    const small = await gw.createProtocol({ tier: 0, name: 'Small' });
    const sentBySmall = async () =>
      (await gw.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM notifications WHERE protocol_id = $1', [small.id]))[0].n;
    let hammering = false;
    let hammer: Promise<void> = Promise.resolve();
    // Once the send is stored, keeps the tier-0 budget (2 per second) spent at the start of every second.
    const startHammer = async () => {
      const before = await sentBySmall();
      await waitFor(async () => (await sentBySmall()) > before || undefined);
      hammering = true;
      hammer = (async () => {
        while (hammering) {
          await Promise.all([1, 2, 3].map(() => fetch(`${gw.url}/v1/usage`, { headers: { authorization: `Bearer ${small.apiKey}` } }).then((r) => r.arrayBuffer())));
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
    };
    let res;
    try {
      // Rarely the wait's last read lands between a window opening and the hammer's next round
      // (a WAIT_TIMEOUT, exit 1), or the send itself is refused: try again then.
      for (let attempt = 0; attempt < 4; attempt++) {
        res = await runCli(['notify', 'send', ...message(), '--wait', '--wait-timeout', '3s', '--max-retries', '0', '--json'], {
          env: { ...env, HERALD_API_KEY: small.apiKey },
          whileRunning: startHammer,
        });
        hammering = false;
        await hammer;
        if (res.code === 5) break;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    } finally {
      hammering = false;
      await hammer;
    }
    assert.equal(res!.code, 5, res!.stderr);
    const out = res!.json();
    assert.equal(out.submission.status, 'queued');
    const { error } = res!.errorJson();
    assert.equal(error.code, 'WAIT_FAILED');
    assert.equal(error.exitCode, 5);
    assert.match(
      error.message,
      new RegExp(`^Notification ${out.submission.notificationId} was accepted \\(queued\\), but waiting for its outcome failed: Rate limit of 2 requests per second exceeded`),
    );
    assert.match(error.idempotencyKey, /^cli_/);
    // The record, when a read answered before the limit closed in, is the one last read.
    if (out.notification !== null) assert.equal(out.notification.notification_id, out.submission.notificationId);
  });

  it('send --wait exits 5 with WAIT_FAILED when the deadline ends a read sitting out the rate limit in its own retries', async () => {
    const proxy = await startLossyProxy(gw.url);
    let reads = 0;
    const refusal = { statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMIT_EXCEEDED', message: 'Rate limit exceeded (test proxy)' };
    // Two reads answer; every later one is refused with Retry-After: 1, so at the deadline a read is
    // between the retries the SDK makes of it.
    proxy.answerInstead = (request) =>
      request.method === 'GET' && request.path.startsWith('/v1/notifications/') && ++reads > 2 ? { status: 429, headers: { 'retry-after': '1' }, body: refusal } : undefined;
    try {
      const res = await runCli(['notify', 'send', ...message(), '--wait', '--wait-timeout', '6s', '--json'], { env: { ...env, HERALD_BASE_URL: proxy.url } });
      assert.equal(res.code, 5, res.stderr);
      const out = res.json();
      assert.equal(out.notification?.status, 'queued', 'the record as last read');
      const { error } = res.errorJson();
      assert.equal(error.code, 'WAIT_FAILED');
      assert.equal(error.exitCode, 5);
      assert.match(error.message, /waiting for its outcome failed: Rate limit exceeded \(test proxy\)/);
      assert.match(error.idempotencyKey, /^cli_/);
    } finally {
      await proxy.close();
    }
  });

  it('--from-stdin reads the notification, flags override it, and an idempotency key answers duplicate', async () => {
    const input = JSON.stringify({ wallet, subject: 'From stdin', body: 'Piped', category: 'system', idempotencyKey: 'stdin-1' });
    const first = await herald(['notify', 'send', '--from-stdin', '--subject', 'Overridden', '--json'], input);
    assert.equal(first.code, 0, first.stderr);
    const id = first.json().notificationId;
    const record = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}`);
    assert.deepEqual([record.body.subject, record.body.category], ['Overridden', 'system']);

    const again = await herald(['notify', 'send', '--from-stdin', '--subject', 'Overridden', '--json'], input);
    assert.deepEqual([again.json().status, again.json().notificationId], ['duplicate', id]);

    const byFlag = await herald(['notify', 'send', ...message(), '--idempotency-key', 'flag-1', '--json']);
    const byFlagAgain = await herald(['notify', 'send', ...message(), '--idempotency-key', 'flag-1']);
    assert.equal(byFlagAgain.code, 0);
    assert.match(byFlagAgain.stdout, new RegExp(`Duplicate of an earlier send .* ${byFlag.json().notificationId}`));

    const conflict = await herald(['notify', 'send', ...message(['--subject', 'Other payload']), '--idempotency-key', 'flag-1', '--json']);
    assert.equal(conflict.code, 1);
    assert.equal(conflict.errorJson().error.code, 'DUPLICATE_IDEMPOTENCY_KEY');
  });

  it('refuses bad input with exit 2 before sending anything', async () => {
    const before = await countSent();
    const missing = await herald(['notify', 'send', '--wallet', wallet, '--subject', 's', '--body', 'b', '--json']);
    assert.equal(missing.code, 2);
    assert.equal(missing.stdout, '');
    assert.match(missing.errorJson().error.message, /category is required \(--category\)/);

    const badWallet = await herald(['notify', 'send', ...message(), '--wallet', 'not-a-wallet']);
    assert.equal(badWallet.code, 2);
    assert.match(badWallet.stderr, /wallet must be a Solana wallet address/);

    for (const [input, pattern] of [
      ['[]', /one JSON object \(for an array, use `herald notify batch --from-stdin`\)/],
      ['{"wallet":', /standard input is not valid JSON/],
      ['', /standard input is empty/],
      [JSON.stringify({ wallet, subject: 's', body: 'b', category: 'defi', prority: 'critical' }), /unknown field "prority"/],
    ] as const) {
      const res = await herald(['notify', 'send', '--from-stdin'], input);
      assert.equal(res.code, 2, input);
      assert.match(res.stderr, pattern);
    }
    assert.equal((await herald(['notify', 'send', ...message(), '--wait-timeout', '5s'])).code, 2, '--wait-timeout without --wait');
    assert.equal((await herald(['notify', 'send', ...message(), '--category', 'spam'])).code, 2);
    assert.equal(await countSent(), before);
  });

  it('exits 3 for a wallet with no identity, and reports opted-out wallets', async () => {
    const stranger = await herald(['notify', 'send', ...message(), '--wallet', makeWallet().address, '--json']);
    assert.equal(stranger.code, 3);
    assert.equal(stranger.errorJson().error.code, 'WALLET_NOT_REGISTERED');

    const leaver = await registeredWallet(gw.url, { email: 'leaver@example.com' });
    await call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: leaver, channels: ['email'] });
    await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${leaver}`);
    const optedOut = await herald(['notify', 'send', ...message(), '--wallet', leaver]);
    assert.equal(optedOut.code, 0, 'accepted: the outcome is in the status');
    assert.match(optedOut.stdout, /Not sent, the wallet opted out/);
    const waited = await herald(['notify', 'send', ...message(['--subject', 'again']), '--wallet', leaver, '--wait', '--json']);
    assert.equal(waited.code, 1);
    assert.equal(waited.json().notification.status, 'opted_out');
    assert.match(waited.errorJson().error.message, /opted out/);
    const human = await herald(['notify', 'send', ...message(['--subject', 'once more']), '--wallet', leaver, '--wait']);
    assert.equal(human.code, 1);
    assert.doesNotMatch(human.stderr, /Queued|waiting/, 'nothing was queued to wait for');
    assert.match(human.stdout, /status\s+opted_out/);
  });

  it('list filters by status and wallet and pages', async () => {
    const res = await herald(['notify', 'list', '--status', 'queued', '--wallet', wallet, '--limit', '2', '--json']);
    assert.equal(res.code, 0, res.stderr);
    const page = res.json();
    assert.deepEqual(Object.keys(page).sort(), ['data', 'page', 'total']);
    assert.equal(page.data.length, 2);
    assert.ok(page.total >= 2);
    for (const item of page.data) {
      assert.deepEqual(Object.keys(item).sort(), ['created_at', 'delivery_channel', 'notification_id', 'receipt_status', 'receipt_tx', 'status', 'subject', 'wallet']);
      assert.deepEqual([item.status, item.wallet], ['queued', wallet]);
    }
    const human = await herald(['notify', 'list', '--limit', '3']);
    assert.match(human.stdout, /^ID\s+STATUS\s+CHANNEL\s+RECEIPT\s+CREATED\s+WALLET\s+SUBJECT/);
    assert.match(human.stdout, /page 1, 3 shown of \d+/);
    assert.equal((await herald(['notify', 'list', '--status', 'lost'])).code, 2);
  });

  it('preview renders every channel without sending', async () => {
    const before = await countSent();
    const res = await herald(['notify', 'preview', ...message(), '--json']);
    assert.equal(res.code, 0, res.stderr);
    const preview = res.json();
    assert.deepEqual(Object.keys(preview).sort(), ['renderedHtml', 'sms', 'smsText', 'subject', 'telegramText']);
    assert.match(preview.renderedHtml, /<strong>health factor<\/strong>/);
    assert.deepEqual(Object.keys(preview.sms).sort(), ['characters', 'encoding', 'segments']);

    const html = await herald(['notify', 'preview', ...message(), '--html']);
    assert.equal(html.stdout.trim(), preview.renderedHtml.trim());
    const human = await herald(['notify', 'preview', '--from-stdin'], JSON.stringify({ wallet, subject: 'S', body: 'Plain body', category: 'defi' }));
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^Subject: S$/m);
    assert.match(human.stdout, /SMS \([\w-]+, \d+ characters, 1 segment\)/);
    assert.equal(await countSent(), before);
  });
});
