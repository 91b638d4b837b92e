import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { ensureBuilt, runCli, scratchHome } from './run-cli.js';

describe('herald template, broadcast, sandbox and report commands (Growth tier)', () => {
  let gw: TestGateway;
  let growth: TestProtocol;
  let developer: TestProtocol;
  let wallets: string[];
  let scratch: ReturnType<typeof scratchHome>;
  let env: Record<string, string>;
  const herald = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra } });
  const ok = async (args: string[], extra: Record<string, string> = {}) => {
    const res = await herald([...args, '--json'], extra);
    assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
    return res.json();
  };

  before(async () => {
    ensureBuilt();
    gw = await startGateway({ env: { HERALD_WORKER_POLL_MS: '50', HERALD_IP_RATE_LIMIT: '10000' } });
    growth = await gw.createProtocol({ tier: 1, name: 'Growing' });
    developer = await gw.createProtocol({ tier: 0, name: 'Small' });
    wallets = [await registeredWallet(gw.url, { email: 'one@example.com' }), await registeredWallet(gw.url, { email: 'two@example.com', telegramChatId: '2' })];
    for (const [wallet, channels] of [[wallets[0], ['email']], [wallets[1], ['email', 'telegram']]] as const) {
      assert.equal((await call(gw.url, growth.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels })).status, 201);
    }
    scratch = scratchHome();
    env = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url, HERALD_API_KEY: growth.apiKey };
  });
  after(async () => {
    await gw.close();
    scratch.cleanup();
  });

  it('template create, list, get, update, get a version, restore and delete', async () => {
    const textFile = path.join(scratch.home, 'alert.txt');
    writeFileSync(textFile, 'Hello {{name}}, your health factor is {{health}}.');
    const fields = ['--name', 'Alert', '--category', 'defi', '--subject', 'Health {{health}}', '--html', '<p>Hello {{name}}: {{health}}</p>', '--text-file', textFile];
    const created = await ok(['template', 'create', ...fields, '--service-footer', 'minimal']);
    assert.deepEqual(Object.keys(created), ['templateId']);
    const id = created.templateId;

    const list = await ok(['template', 'list']);
    assert.deepEqual(list.data.map((t: any) => Object.keys(t).sort()), [['category', 'createdAt', 'id', 'name']]);
    assert.equal(list.data[0].id, id);

    const record = await ok(['template', 'get', id]);
    assert.deepEqual(Object.keys(record).sort(), ['category', 'createdAt', 'htmlSource', 'id', 'name', 'serviceFooter', 'subjectTemplate', 'textSource', 'updatedAt', 'version', 'versions']);
    assert.deepEqual([record.version, record.serviceFooter, record.textSource], [1, 'minimal', 'Hello {{name}}, your health factor is {{health}}.']);

    const updated = await ok(['template', 'update', id, '--subject', 'Now {{health}}']);
    assert.deepEqual([updated.version, updated.subjectTemplate, updated.htmlSource], [2, 'Now {{health}}', record.htmlSource]);
    const first = await ok(['template', 'get', id, '1']);
    assert.deepEqual([first.version, first.current, first.subjectTemplate], [1, false, 'Health {{health}}']);
    const restored = await ok(['template', 'restore', id, '1']);
    assert.deepEqual([restored.version, restored.subjectTemplate], [3, 'Health {{health}}']);
    assert.match((await herald(['template', 'get', id])).stdout, /version\s+3 of 3/);

    const sent = await ok(['notify', 'send', '--wallet', wallets[0], '--subject', 'x', '--body', 'x', '--category', 'defi', '--template-id', id, '--template-variables', '{"name":"Ada","health":"1.05"}', '--wait', '--wait-timeout', '20s']);
    assert.equal(sent.notification.status, 'delivered');
    assert.deepEqual([sent.notification.template_id, sent.notification.template_version], [id, 3]);

    const missing = await herald(['template', 'create', '--name', 'Half']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /Missing --category, --subject, --html or --html-file, --text or --text-file/);
    assert.equal((await herald(['template', 'update', id])).code, 2, 'nothing to change');
    assert.equal((await herald(['template', 'create', ...fields, '--html-file', textFile])).code, 2, '--html and --html-file');

    assert.equal((await herald(['template', 'delete', id])).code, 2, 'asks for --yes');
    assert.deepEqual(await ok(['template', 'delete', id, '--yes']), { deleted: true, id });
    assert.equal((await herald(['template', 'get', id])).code, 3);

    const gated = await herald(['template', 'list', '--json'], { HERALD_API_KEY: developer.apiKey });
    assert.equal(gated.code, 4);
    assert.equal(gated.errorJson().error.statusCode, 403);
  });

  it('broadcast sends to every subscriber and broadcast status follows it to delivery', async () => {
    const accepted = await ok(['broadcast', '--subject', 'Upgrade', '--body', 'We upgrade **tonight**.', '--category', 'governance']);
    assert.deepEqual(Object.keys(accepted).sort(), ['broadcast_id', 'estimated_delivery_s', 'queued_count', 'total_subscribers']);
    assert.deepEqual([accepted.queued_count, accepted.total_subscribers], [2, 2]);
    const id = accepted.broadcast_id;
    await waitFor(async () => (await call(gw.url, growth.apiKey, 'GET', `/v1/broadcasts/${id}`)).body.counts.delivered === 2);

    const status = await ok(['broadcast', 'status', id]);
    assert.deepEqual(Object.keys(status).sort(), [
      'broadcast_id',
      'category',
      'counts',
      'created_at',
      'environment',
      'queued_count',
      'subject',
      'template_id',
      'template_version',
      'total_subscribers',
      'write_receipt',
    ]);
    assert.deepEqual(status.counts, { queued: 0, sending: 0, delivered: 2, bounced: 0, failed: 0, opted_out: 0 });
    assert.match((await herald(['broadcast', 'status', id])).stdout, /delivered\s+2/);

    assert.equal((await herald(['broadcast', '--subject', 'No body', '--category', 'defi'])).code, 2);
    const gated = await herald(['broadcast', '--subject', 's', '--body', 'b', '--category', 'defi'], { HERALD_API_KEY: developer.apiKey });
    assert.equal(gated.code, 4);
    assert.match(gated.stderr, /TIER_REQUIRED/);
    assert.equal((await herald(['broadcast', 'status', 'bcast_missing'])).code, 3);
  });

  it('sandbox messages lists what the capture provider kept', async () => {
    const sent = await ok(['notify', 'send', '--wallet', wallets[1], '--subject', 'Sandboxed', '--body', 'Only **captured**', '--category', 'system', '--preferred-channel', 'telegram', '--wait', '--wait-timeout', '20s'], {
      HERALD_API_KEY: growth.sandboxApiKey,
    });
    assert.equal(sent.notification.environment, 'sandbox');
    const page = await ok(['sandbox', 'messages', '--wallet', wallets[1], '--channel', 'telegram']);
    assert.deepEqual(Object.keys(page).sort(), ['data', 'page', 'total']);
    // The broadcast above reached this wallet on telegram too: the newest message is the sandbox send.
    const [message] = page.data;
    assert.deepEqual(Object.keys(message).sort(), ['channel', 'createdAt', 'environment', 'html', 'id', 'notificationId', 'subject', 'text', 'wallet']);
    assert.deepEqual([message.notificationId, message.environment, message.channel], [sent.submission.notificationId, 'sandbox', 'telegram']);
    assert.match(message.text, /captured/);
    const human = await herald(['sandbox', 'messages', '--limit', '1']);
    assert.match(human.stdout, /page 1, 1 shown of \d+/);
  });

  it('analytics, engagement, audience and usage report with the API field names', async () => {
    const analytics = await ok(['analytics', '--period', '7d']);
    assert.deepEqual(Object.keys(analytics).sort(), ['bounce_rate', 'breakdown', 'delivery_rate', 'period', 'total_sends']);
    assert.equal(analytics.period, '7d');
    assert.ok(analytics.breakdown.delivered >= 3);
    assert.equal(analytics.delivery_rate, 1);

    const engagement = await ok(['engagement', '--start-date', '2020-01-01']);
    assert.deepEqual(Object.keys(engagement).sort(), ['clickRate', 'deliveredEmails', 'endDate', 'openRate', 'startDate', 'unsubscribeRate']);
    assert.equal(engagement.startDate, '2020-01-01T00:00:00.000Z');
    const badDate = await herald(['engagement', '--end-date', 'yesterday', '--json']);
    assert.equal(badDate.code, 2);
    assert.match(badDate.errorJson().error.message, /endDate must be an ISO 8601 date/);

    const audience = await ok(['audience']);
    assert.deepEqual(Object.keys(audience).sort(), ['broadcastableSubscribers', 'channelCoverage', 'registrationTrend', 'totalRegistered']);
    assert.deepEqual([audience.totalRegistered, audience.broadcastableSubscribers, audience.channelCoverage], [2, 2, { email: 2, telegram: 1, sms: 0 }]);
    assert.equal(audience.registrationTrend.length, 30);

    const human = await herald(['analytics']);
    assert.match(human.stdout, /delivery rate\s+100\.0%/);
    assert.match((await herald(['audience'])).stdout, /broadcastable\s+2/);
    assert.equal((await herald(['analytics', '--period', '1y'])).code, 2);
  });
});
