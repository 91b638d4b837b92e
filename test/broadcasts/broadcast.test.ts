import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createDeliveryWorker } from '../../packages/server/src/delivery/worker.js';
import { periodOf } from '../../packages/server/src/limits/quota.js';
import { call, isErrorBody, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { makeWallet, registeredWallet } from '../support/wallets.js';

const ALL = { email: 'all@example.com', phone: '+15555550101', telegramChatId: '1001' };

describe('POST /v1/broadcast and GET /v1/broadcasts/:id', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let rival: TestProtocol;
  const w: Record<string, string> = {};

  // api role: rows are inspected before any delivery; the test that needs deliveries runs a worker.
  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    rival = await gw.createProtocol({ tier: 3, name: 'Rival' });
    const subscribe = async (key: string, wallet: string, channels: string[]) => {
      const res = await call(gw.url, key, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    };
    w.telegram = await registeredWallet(gw.url, ALL);
    await subscribe(acme.apiKey, w.telegram, ['email', 'telegram']);
    w.email = await registeredWallet(gw.url, { email: 'two@example.com', phone: '+15555550102' });
    await subscribe(acme.apiKey, w.email, ['sms', 'email']);
    w.sms = await registeredWallet(gw.url, { phone: '+15555550103' });
    await subscribe(acme.apiKey, w.sms, ['sms']);
    w.unreachable = await registeredWallet(gw.url, { email: 'four@example.com' });
    await subscribe(acme.apiKey, w.unreachable, ['telegram']);
    w.optedOut = await registeredWallet(gw.url, ALL);
    await subscribe(acme.apiKey, w.optedOut, ['email']);
    assert.equal((await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${w.optedOut}`)).status, 200);
    w.neverSubscribed = await registeredWallet(gw.url, ALL);
    w.rivalOnly = await registeredWallet(gw.url, ALL);
    await subscribe(rival.apiKey, w.rivalOnly, ['email']);
    // A subscription left behind by a wallet that is no longer registered.
    w.ghost = makeWallet().address;
    await gw.herald.deps.db.query(`INSERT INTO subscriptions (protocol_id, wallet, channels) VALUES ($1, $2, '{email}')`, [acme.id, w.ghost]);
  });
  after(() => gw.close());

  const broadcast = (body: Record<string, unknown>, key = acme.apiKey) =>
    call(gw.url, key, 'POST', '/v1/broadcast', { subject: 'Protocol upgrade', body: 'We upgrade **tonight**.', category: 'governance', ...body });
  const rowsOf = (broadcastId: string) =>
    gw.herald.deps.db.query<any>(
      `SELECT id, wallet, channel, status, environment, receipt_status, receipt_requested_at, receipt_failure_reason, next_attempt_at, last_error,
              created_at, template_id, template_version, template_variables
       FROM notifications WHERE broadcast_id = $1`,
      [broadcastId],
    );

  it('fans out to every active subscriber on its channel, honouring opt-outs', async () => {
    const res = await broadcast({ receipt: true });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['broadcast_id', 'estimated_delivery_s', 'queued_count', 'total_subscribers']);
    assert.match(res.body.broadcast_id, /^bcast_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(res.body.total_subscribers, 4);
    assert.equal(res.body.queued_count, 3);
    assert.ok(Number.isInteger(res.body.estimated_delivery_s) && res.body.estimated_delivery_s >= 1);

    const rows = await rowsOf(res.body.broadcast_id);
    const byWallet = new Map(rows.map((r: any) => [r.wallet, r]));
    assert.equal(rows.length, 4);
    assert.equal(new Set(rows.map((r: any) => r.id)).size, 4);
    for (const row of rows) assert.match(row.id, /^[0-9A-HJKMNP-TV-Z]{26}$/, 'ids are ULIDs');
    const expected: [string, string | null, string, string][] = [
      [w.telegram, 'telegram', 'queued', 'pending'],
      [w.email, 'email', 'queued', 'pending'],
      [w.sms, 'sms', 'queued', 'pending'],
      [w.unreachable, null, 'failed', 'failed'],
    ];
    for (const [wallet, channel, status, receipt] of expected) {
      const row = byWallet.get(wallet);
      assert.ok(row, `a row for ${wallet}`);
      assert.equal(row.channel, channel);
      assert.equal(row.status, status);
      assert.equal(row.environment, 'production');
      assert.equal(row.receipt_status, receipt);
      assert.equal(row.receipt_requested_at?.getTime(), row.created_at.getTime());
      assert.equal(row.next_attempt_at?.getTime() ?? null, status === 'queued' ? row.created_at.getTime() : null);
    }
    assert.equal(byWallet.get(w.unreachable).last_error, 'no verified channel among the subscribed channels');
    for (const excluded of [w.optedOut, w.neverSubscribed, w.rivalOnly, w.ghost]) assert.ok(!byWallet.has(excluded));

    const record = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${byWallet.get(w.email).id}`);
    assert.equal(record.body.broadcast_id, res.body.broadcast_id);
    assert.equal(record.body.write_receipt, true);
  });

  it('reports live counts per status while the worker delivers', async () => {
    const res = await broadcast({});
    const id = res.body.broadcast_id;
    const before = await call(gw.url, acme.apiKey, 'GET', `/v1/broadcasts/${id}`);
    assert.equal(before.status, 200);
    assert.deepEqual(before.body.counts, { queued: 3, sending: 0, delivered: 0, bounced: 0, failed: 1, opted_out: 0 });
    assert.equal(before.body.subject, 'Protocol upgrade');
    assert.equal(before.body.category, 'governance');
    assert.equal(before.body.total_subscribers, 4);
    assert.equal(before.body.queued_count, 3);
    assert.equal(before.body.write_receipt, false);

    const worker = createDeliveryWorker(gw.herald.deps, { ...gw.herald.deps.config.delivery, idleMs: 50 });
    worker.start();
    try {
      const done = await waitFor(async () => {
        const now = await call(gw.url, acme.apiKey, 'GET', `/v1/broadcasts/${id}`);
        return now.body.counts.delivered === 3 ? now.body : undefined;
      });
      assert.deepEqual(done.counts, { queued: 0, sending: 0, delivered: 3, bounced: 0, failed: 1, opted_out: 0 });
    } finally {
      await worker.stop();
    }
    const captured = await gw.herald.deps.db.query<any>(
      `SELECT c.wallet, c.channel, c.text FROM captured_messages c JOIN notifications n ON n.id = c.notification_id WHERE n.broadcast_id = $1`,
      [id],
    );
    assert.deepEqual(captured.map((c: any) => `${c.wallet}:${c.channel}`).sort(), [`${w.telegram}:telegram`, `${w.email}:email`, `${w.sms}:sms`].sort());
    assert.ok(captured.every((c: any) => c.text.includes('Protocol upgrade')));

    for (const [key, path] of [
      [rival.apiKey, `/v1/broadcasts/${id}`],
      [acme.apiKey, '/v1/broadcasts/bcast_unknown'],
    ]) {
      const missing = await call(gw.url, key, 'GET', path);
      assert.equal(missing.status, 404);
      assert.ok(isErrorBody(missing.body));
      assert.equal(missing.body.code, 'BROADCAST_NOT_FOUND');
    }
  });

  it('renders a template for every subscriber and records its version', async () => {
    const created = await call(gw.url, acme.apiKey, 'POST', '/v1/templates/email', {
      name: 'Upgrade',
      category: 'governance',
      subjectTemplate: 'Upgrade to {{version}}',
      htmlSource: '<p>Version {{version}}</p>',
      textSource: 'Version {{version}}',
    });
    const templateId = created.body.templateId;
    const ok = await broadcast({ templateId, templateVariables: { version: 'v2<' } });
    assert.equal(ok.status, 202);
    const rows = await rowsOf(ok.body.broadcast_id);
    assert.ok(rows.every((r: any) => r.template_id === templateId && r.template_version === 1 && r.template_variables.version === 'v2<'));

    const missing = await broadcast({ templateId, templateVariables: { other: 1 } });
    assert.equal(missing.status, 400);
    assert.match(missing.body.message, /^templateVariables has no value for "version"/);
    const unknown = await broadcast({ templateId: 'tmpl_nope' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'TEMPLATE_NOT_FOUND');
  });

  it('needs the Growth tier and a valid body', async () => {
    const dev = await gw.createProtocol({ tier: 0 });
    const gated = await call(gw.url, dev.apiKey, 'POST', '/v1/broadcast', { nonsense: true });
    assert.equal(gated.status, 403);
    assert.equal(gated.body.code, 'TIER_REQUIRED');
    const garbage = await fetch(`${gw.url}/v1/broadcast`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.apiKey}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    assert.equal(garbage.status, 403, 'the tier is checked before the body is read');
    assert.equal((await garbage.json()).code, 'TIER_REQUIRED');
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ subject: undefined }, /^subject is required$/],
      [{ body: ' \t ' }, /^body is blank: /],
      [{ category: 'news' }, /^category must be one of/],
      [{ receipt: 'yes' }, /^receipt must be a boolean$/],
      // A recipient would be ignored by a call that messages everyone: refused instead.
      [{ wallet: makeWallet().address }, /^wallet: a broadcast goes to every active subscriber and takes no recipient/],
      [{ walletAddress: makeWallet().address }, /^walletAddress: /],
      [{ wallets: [makeWallet().address] }, /^wallets: /],
      [{ recipients: [makeWallet().address] }, /^recipients: a broadcast goes to every active subscriber and takes no recipient/],
      [{ to: makeWallet().address }, /^to: /],
      [{ channels: ['sms'] }, /^channels: a broadcast reaches each subscriber on the channels they subscribed with and takes no channel$/],
      [{ channel: 'email' }, /^channel: /],
      [{ preferredChannel: 'telegram' }, /^preferredChannel: /],
      // A time or a priority would be ignored: the broadcast would go out at once, as normal.
      [{ scheduledFor: '2030-01-01T00:00:00Z' }, /^scheduledFor: a broadcast is sent when it is accepted and cannot be scheduled/],
      [{ cronExpr: '0 9 * * MON' }, /^cronExpr: /],
      [{ timezone: 'Europe/Paris' }, /^timezone: /],
      [{ priority: 'critical' }, /^priority: a broadcast's messages have normal priority/],
    ];
    const before = await gw.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM broadcasts WHERE protocol_id = $1', [acme.id]);
    for (const [body, message] of cases) {
      const res = await broadcast(body);
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, message);
    }
    const afterRefusals = await gw.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM broadcasts WHERE protocol_id = $1', [acme.id]);
    assert.equal(afterRefusals[0].n, before[0].n, 'nothing sent');
  });

  it('reserves quota for every queued message or for none (402), and sandbox broadcasts are free', async () => {
    const tight = await gw.createProtocol({ tier: 1, name: 'Tight' });
    for (const wallet of [w.telegram, w.email, w.sms]) {
      await call(gw.url, tight.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['email', 'telegram', 'sms'] });
    }
    const db = gw.herald.deps.db;
    const period = periodOf(new Date()).start.toISOString().slice(0, 10);
    const setUsage = (sends: number) =>
      db.query(
        `INSERT INTO usage_periods (protocol_id, period_start, sends) VALUES ($1, $2, $3)
         ON CONFLICT (protocol_id, period_start) DO UPDATE SET sends = EXCLUDED.sends`,
        [tight.id, period, sends],
      );
    const usage = async () => (await db.query<any>('SELECT sends FROM usage_periods WHERE protocol_id = $1', [tight.id]))[0].sends;

    await setUsage(49_998);
    const refused = await broadcast({}, tight.apiKey);
    assert.equal(refused.status, 402);
    assert.equal(refused.body.code, 'INSUFFICIENT_QUOTA');
    assert.match(refused.body.message, /^This broadcast needs \d+ sends and fewer are left of the monthly quota of 50000$/);
    assert.equal(await usage(), 49_998);
    const [{ n }] = await db.query<any>('SELECT count(*)::int AS n FROM notifications WHERE protocol_id = $1', [tight.id]);
    assert.equal(n, 0, 'no notification was written');
    assert.equal((await db.query('SELECT 1 FROM broadcasts WHERE protocol_id = $1', [tight.id])).length, 0);
    const events = await db.query<any>(`SELECT type FROM events WHERE protocol_id = $1`, [tight.id]);
    assert.deepEqual(events.map((e: any) => e.type), ['quota.exceeded']);

    const sandbox = await broadcast({}, tight.sandboxApiKey);
    assert.equal(sandbox.status, 202);
    assert.equal(sandbox.body.queued_count, 3);
    assert.equal(await usage(), 49_998, 'sandbox sends are not billed');
    assert.ok((await rowsOf(sandbox.body.broadcast_id)).every((r: any) => r.environment === 'sandbox'));

    await setUsage(49_997);
    const fits = await broadcast({}, tight.apiKey);
    assert.equal(fits.status, 202);
    assert.equal(fits.body.queued_count, 3);
    assert.equal(await usage(), 50_000);
  });
});
