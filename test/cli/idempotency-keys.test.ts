import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { startLossyProxy, type LossyProxy } from './lossy-proxy.js';
import { ensureBuilt, runCli, scratchHome } from './run-cli.js';

const SUBMISSION_KEYS = ['deliveryChannel', 'environment', 'estimatedDeliveryMs', 'notificationId', 'recipientRegistered', 'status'];
const GENERATED = /^cli_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// The contract: "The tool handles authentication, retries and idempotency itself". Without
// --idempotency-key the CLI sends a key of its own, so the SDK may retry a send whose answer was
// lost, and the retry finds the stored notification instead of sending a second one.
describe('herald sends carry an idempotency key of their own', () => {
  let gw: TestGateway;
  let proxy: LossyProxy;
  let wallet: string;
  let scratch: ReturnType<typeof scratchHome>;

  const message = { subject: 'Health factor', body: 'Your **health factor** is 1.05', category: 'defi' };
  const flags = (subject = message.subject) => ['--wallet', wallet, '--subject', subject, '--body', message.body, '--category', message.category];
  const herald = (protocol: TestProtocol, args: string[], baseUrl = gw.url) =>
    runCli(args, { env: { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: baseUrl, HERALD_API_KEY: protocol.apiKey } });
  const sentBy = async (protocol: TestProtocol) => (await call(gw.url, protocol.apiKey, 'GET', '/v1/notifications?limit=1')).body.total as number;
  const keyOf = async (id: string) =>
    (await gw.herald.deps.db.query<{ idempotency_key: string | null }>('SELECT idempotency_key FROM notifications WHERE id = $1', [id]))[0].idempotency_key;
  const postsTo = (endpoint: string, from: number) => proxy.seen.slice(from).filter((r) => r.method === 'POST' && r.path === endpoint);

  before(async () => {
    ensureBuilt();
    // Private webhook targets allowed (as the embedded default has it), so an endpoint can be registered on either engine.
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000', HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    proxy = await startLossyProxy(gw.url);
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
    scratch = scratchHome();
  });
  after(async () => {
    await proxy.close();
    await gw.close();
    scratch.cleanup();
  });

  it('notify send without --idempotency-key sends a new cli_<uuid> key, which the gateway deduplicates on', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const human = await herald(acme, ['notify', 'send', ...flags()]);
    assert.equal(human.code, 0, human.stderr);
    const id = /Queued notification (\S+)/.exec(human.stdout)?.[1];
    const key = /idempotency key\s+(\S+) \(generated\)/.exec(human.stdout)?.[1];
    assert.ok(id && key, human.stdout);
    assert.match(key, GENERATED);
    // The same request with that key, straight to the API, is a repeat of the CLI's send.
    const repeat = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, ...message, idempotencyKey: key });
    assert.deepEqual([repeat.status, repeat.body.status, repeat.body.notificationId], [202, 'duplicate', id]);

    // --json keeps the documented shape; each run has a key of its own, so running twice sends twice.
    const [first, second] = [await herald(acme, ['notify', 'send', ...flags(), '--json']), await herald(acme, ['notify', 'send', ...flags(), '--json'])];
    assert.deepEqual(Object.keys(first.json()).sort(), SUBMISSION_KEYS);
    assert.deepEqual([first.json().status, second.json().status], ['queued', 'queued']);
    const keys = await Promise.all([first, second].map((res) => keyOf(res.json().notificationId)));
    assert.match(keys[0]!, GENERATED);
    assert.notEqual(keys[0], keys[1]);

    const given = await herald(acme, ['notify', 'send', ...flags(), '--idempotency-key', 'mine-1']);
    assert.match(given.stdout, /idempotency key\s+mine-1$/m);
    assert.equal(await sentBy(acme), 4);
  });

  for (const loss of ['503', 'drop'] as const) {
    it(`notify send retries after ${loss === '503' ? 'a 503' : 'a dropped connection'} with the same key: one notification, answered duplicate`, async () => {
      const acme = await gw.createProtocol({ tier: 3 });
      const from = proxy.seen.length;
      proxy.loseNextAnswer('POST', '/v1/notify', loss);
      const res = await herald(acme, ['notify', 'send', ...flags(`Lost answer (${loss})`), '--json'], proxy.url);
      assert.equal(res.code, 0, res.stderr);

      const attempts = postsTo('/v1/notify', from).map((r) => JSON.parse(r.body).idempotencyKey);
      assert.equal(attempts.length, 2, 'the first attempt and one retry');
      assert.match(attempts[0], GENERATED);
      assert.equal(attempts[1], attempts[0]);
      const submission = res.json();
      assert.equal(submission.status, 'duplicate', 'the first attempt was stored; the retry found it');
      assert.equal(await keyOf(submission.notificationId), attempts[0]);
      assert.equal(await sentBy(acme), 1);
    });
  }

  it('says so in words when the retry found the first attempt', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    proxy.loseNextAnswer('POST', '/v1/notify', '503');
    const res = await herald(acme, ['notify', 'send', ...flags('Lost answer, human')], proxy.url);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^Duplicate of an earlier send/);
    assert.match(res.stderr, /its answer was lost; the retry found it, so the notification was sent once/);
    assert.equal(await sentBy(acme), 1);
  });

  it('notify batch keys each item without a key, so a bulk request whose connection dropped is retried safely', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const file = path.join(scratch.home, 'mixed.json');
    const batch = [0, 1, 2].map((i) => ({ wallet, ...message, subject: `Item ${i}`, ...(i === 1 ? { idempotencyKey: 'own-1' } : {}) }));
    writeFileSync(file, JSON.stringify(batch));
    const from = proxy.seen.length;
    proxy.loseNextAnswer('POST', '/v1/notify/bulk', 'drop');
    const res = await herald(acme, ['notify', 'batch', '--file', file, '--yes', '--json'], proxy.url);
    assert.equal(res.code, 0, res.stderr);

    const attempts = postsTo('/v1/notify/bulk', from);
    assert.equal(attempts.length, 2);
    assert.equal(attempts[1].body, attempts[0].body, 'the retry repeats the same keys');
    const results = res.json();
    assert.deepEqual(results.map((r: any) => r.status), ['duplicate', 'duplicate', 'duplicate']);
    const keys = await Promise.all(results.map((r: any) => keyOf(r.notificationId)));
    const runKey = keys[0]!.replace(/-0$/, '');
    assert.match(runKey, GENERATED);
    assert.deepEqual(keys, [`${runKey}-0`, 'own-1', `${runKey}-2`], 'a key in the file is kept');
    assert.equal(await sentBy(acme), 3);
  });

  it('notify batch says the items of a request whose every answer was lost may have been stored, not that they were not sent', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const file = path.join(scratch.home, 'lost.json');
    writeFileSync(file, JSON.stringify([0, 1].map((i) => ({ wallet, ...message, subject: `Lost ${i}` }))));
    for (let i = 0; i < 3; i++) proxy.loseNextAnswer('POST', '/v1/notify/bulk', '503');
    const res = await herald(acme, ['notify', 'batch', '--file', file, '--yes'], proxy.url);
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /Request 1 of 1 was answered 503: items 0 to 1 may have been stored\./);
    assert.doesNotMatch(res.stderr, /were not sent/);
    const runKey = /Re-running with --idempotency-key (\S+) sends only what is missing/.exec(res.stderr)?.[1];
    assert.ok(runKey, res.stderr);
    assert.equal(await sentBy(acme), 2, 'the gateway did store them');
    const again = await herald(acme, ['notify', 'batch', '--file', file, '--yes', '--json', '--idempotency-key', runKey]);
    assert.deepEqual(again.json().map((r: any) => r.status), ['duplicate', 'duplicate']);
    assert.equal(await sentBy(acme), 2);
  });

  it('a send whose every answer was lost exits 6 naming its key, and re-running with that key sends nothing more', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const from = proxy.seen.length;
    // The first try and both retries reach the gateway; no answer comes back.
    for (let i = 0; i < 3; i++) proxy.loseNextAnswer('POST', '/v1/notify', 'drop');
    const lost = await herald(acme, ['notify', 'send', ...flags('Lost answers'), '--json'], proxy.url);
    assert.equal(lost.code, 6, lost.stderr);
    assert.equal(lost.stdout, '');
    const { error } = lost.errorJson();
    assert.match(error.code, /^NETWORK_/);
    assert.match(error.idempotencyKey, GENERATED);
    assert.equal(postsTo('/v1/notify', from).length, 3);
    assert.equal(await sentBy(acme), 1, 'the first try was stored');

    const again = await herald(acme, ['notify', 'send', ...flags('Lost answers'), '--json', '--idempotency-key', error.idempotencyKey]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json().status, 'duplicate');
    assert.equal(await sentBy(acme), 1);

    // People are told the same.
    proxy.loseNextAnswer('POST', '/v1/notify', 'drop');
    const human = await herald(acme, ['notify', 'send', ...flags('Lost again'), '--max-retries', '0'], proxy.url);
    assert.equal(human.code, 6);
    assert.match(human.stderr, /Re-running with --idempotency-key cli_\S+ does not send it twice/);
  });

  it('notify batch --json names the key to run again with in its error', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const file = path.join(scratch.home, 'refused-json.json');
    writeFileSync(file, JSON.stringify(Array.from({ length: 150 }, (_, i) => ({ wallet, ...message, subject: `Item ${i}`, ...(i === 120 ? { templateId: 'tmpl_missing' } : {}) }))));
    const first = await herald(acme, ['notify', 'batch', '--file', file, '--yes', '--json']);
    assert.equal(first.code, 3, first.stderr);
    const runKey = first.errorJson().error.idempotencyKey;
    assert.match(runKey, GENERATED);
    const mine = await herald(acme, ['notify', 'batch', '--file', file, '--yes', '--json', '--idempotency-key', 'batch-run-7']);
    assert.equal(mine.errorJson().error.idempotencyKey, 'batch-run-7');
  });

  it('a refused batch names its generated key: re-running with it sends only what is missing', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const file = path.join(scratch.home, 'refused.json');
    writeFileSync(file, JSON.stringify(Array.from({ length: 150 }, (_, i) => ({ wallet, ...message, subject: `Item ${i}`, ...(i === 120 ? { templateId: 'tmpl_missing' } : {}) }))));
    const first = await herald(acme, ['notify', 'batch', '--file', file, '--yes']);
    assert.equal(first.code, 3, first.stderr);
    const runKey = /Re-running with --idempotency-key (\S+) sends only what is missing/.exec(first.stderr)?.[1];
    assert.ok(runKey, first.stderr);
    assert.match(runKey, GENERATED);
    assert.equal(await sentBy(acme), 100);

    const again = await herald(acme, ['notify', 'batch', '--file', file, '--yes', '--idempotency-key', runKey, '--json']);
    assert.equal(again.code, 3);
    assert.ok(again.json().slice(0, 100).every((r: any) => r.status === 'duplicate'));
    assert.equal(await sentBy(acme), 100);
  });

  it('broadcast and schedule creation carry an Idempotency-Key of their own: a lost answer is retried without creating twice', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    await call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['email'] });
    const broadcasts = async () => (await gw.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM broadcasts WHERE protocol_id = $1', [acme.id]))[0].n;
    const schedules = async () => (await gw.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM schedules WHERE protocol_id = $1', [acme.id]))[0].n;
    const cases = [
      { path: '/v1/broadcast', args: ['broadcast', '--subject', 'Upgrade', '--body', 'Tonight', '--category', 'governance'], count: broadcasts, id: (json: any) => json.broadcast_id },
      { path: '/v1/schedule/cron', args: ['schedule', 'cron', ...flags('Weekly'), '--cron', '0 9 * * MON'], count: schedules, id: (json: any) => json.id },
      { path: '/v1/schedule', args: ['schedule', 'once', ...flags('Once'), '--at', '2030-06-01T09:00', '--timezone', 'Europe/Berlin'], count: schedules, id: (json: any) => json.id },
    ];
    for (const { path: endpoint, args, count, id } of cases) {
      const before = await count();
      const from = proxy.seen.length;
      proxy.loseNextAnswer('POST', endpoint, 'drop');
      const res = await herald(acme, [...args, '--json'], proxy.url);
      assert.equal(res.code, 0, res.stderr);
      const attempts = postsTo(endpoint, from).map((r) => r.headers['idempotency-key']);
      assert.equal(attempts.length, 2, `${endpoint}: the first attempt and one retry`);
      assert.match(String(attempts[0]), GENERATED);
      assert.equal(attempts[1], attempts[0]);
      assert.equal(await count(), before + 1, `${endpoint}: created once`);

      // A given key: running the command again answers with the first result.
      const first = await herald(acme, [...args, '--json', '--idempotency-key', `mine-${endpoint}`]);
      const again = await herald(acme, [...args, '--json', '--idempotency-key', `mine-${endpoint}`]);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(id(again.json()), id(first.json()));
      assert.equal(await count(), before + 2);
    }

    // Every answer lost: exit 6 naming the key, and re-running with it creates nothing more.
    const before = await broadcasts();
    for (let i = 0; i < 3; i++) proxy.loseNextAnswer('POST', '/v1/broadcast', 'drop');
    const lost = await herald(acme, [...cases[0].args, '--json'], proxy.url);
    assert.equal(lost.code, 6, lost.stderr);
    const key = lost.errorJson().error.idempotencyKey;
    assert.match(key, GENERATED);
    const rerun = await herald(acme, [...cases[0].args, '--json', '--idempotency-key', key]);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal(await broadcasts(), before + 1);
    for (const bad of ['', 'ключ', ' padded']) {
      const refused = await herald(acme, [...cases[0].args, '--idempotency-key', bad]);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /--idempotency-key must be 1 to 255 printable ASCII characters/);
    }
    assert.equal(await broadcasts(), before + 1, 'nothing sent for a refused key');

    // People are told what re-running with the key does for a creation.
    proxy.loseNextAnswer('POST', '/v1/broadcast', 'drop');
    const human = await herald(acme, [...cases[0].args, '--max-retries', '0'], proxy.url);
    assert.equal(human.code, 6);
    assert.match(human.stderr, /Re-running with --idempotency-key cli_\S+ does not create it twice\./);
  });

  it('template create, update, restore, webhook create and rotate-secret carry an Idempotency-Key of their own: a lost answer is retried without creating twice', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    const count = async (sql: string) => (await gw.herald.deps.db.query<{ n: number }>(sql, [acme.id]))[0].n;
    const templates = () => count('SELECT count(*)::int AS n FROM email_templates WHERE protocol_id = $1');
    const versions = () => count('SELECT count(*)::int AS n FROM email_template_versions v JOIN email_templates t ON t.id = v.template_id WHERE t.protocol_id = $1');
    const create = ['template', 'create', '--name', 'Alert', '--category', 'defi', '--subject', 'Health {{h}}', '--html', '<p>{{h}}</p>', '--text', '{{h}}', '--json'];

    let from = proxy.seen.length;
    proxy.loseNextAnswer('POST', '/v1/templates/email', 'drop');
    const created = await herald(acme, create, proxy.url);
    assert.equal(created.code, 0, created.stderr);
    const keys = postsTo('/v1/templates/email', from).map((r) => r.headers['idempotency-key']);
    assert.equal(keys.length, 2, 'the first attempt and one retry');
    assert.match(String(keys[0]), GENERATED);
    assert.equal(keys[1], keys[0]);
    assert.deepEqual([await templates(), await versions()], [1, 1]);
    const id = created.json().templateId;

    from = proxy.seen.length;
    proxy.loseNextAnswer('PUT', `/v1/templates/email/${id}`, '503');
    const updated = await herald(acme, ['template', 'update', id, '--subject', 'Now {{h}}', '--json'], proxy.url);
    assert.equal(updated.code, 0, updated.stderr);
    const puts = proxy.seen.slice(from).filter((r) => r.method === 'PUT').map((r) => r.headers['idempotency-key']);
    assert.equal(puts.length, 2);
    assert.equal(puts[1], puts[0]);
    assert.equal(updated.json().version, 2);
    assert.equal(await versions(), 2, 'one version for the update, retry and all');

    proxy.loseNextAnswer('POST', `/v1/templates/email/${id}/versions/1/restore`, 'drop');
    const restored = await herald(acme, ['template', 'restore', id, '1', '--json'], proxy.url);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal(restored.json().version, 3);
    assert.equal(await versions(), 3);

    // A webhook endpoint too: one registration, and the retry shows the same secret.
    proxy.loseNextAnswer('POST', '/v1/webhooks', 'drop');
    const hooked = await herald(acme, ['webhook', 'create', '--url', 'https://hooks.example.com/h', '--json'], proxy.url);
    assert.equal(hooked.code, 0, hooked.stderr);
    assert.match(hooked.json().secret, /^whsec_/);
    assert.equal(await count('SELECT count(*)::int AS n FROM webhook_endpoints WHERE protocol_id = $1'), 1);
    // And its rotation: the retry answers the first new secret, so the one before it keeps its grace period.
    proxy.loseNextAnswer('POST', `/v1/webhooks/${hooked.json().id}/rotate-secret`, '503');
    const rotated = await herald(acme, ['webhook', 'rotate-secret', hooked.json().id, '--json'], proxy.url);
    assert.equal(rotated.code, 0, rotated.stderr);
    const [row] = await gw.herald.deps.db.query<{ secret_enc: string; previous_secret_enc: string }>(
      'SELECT secret_enc, previous_secret_enc FROM webhook_endpoints WHERE id = $1',
      [hooked.json().id],
    );
    assert.deepEqual(
      [gw.herald.deps.secrets.decrypt(row.secret_enc), gw.herald.deps.secrets.decrypt(row.previous_secret_enc)],
      [rotated.json().secret, hooked.json().secret],
    );

    // A given key: running the command again answers with the first result.
    const first = await herald(acme, [...create, '--idempotency-key', 'alert-v1']);
    const again = await herald(acme, [...create, '--idempotency-key', 'alert-v1']);
    assert.equal(again.json().templateId, first.json().templateId);
    assert.equal(await templates(), 2);
  });

  it('Ctrl-C while a keyed request is in flight names its key, for every command that sends one', async () => {
    // A server that takes each request and never answers it.
    const taken: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
    const hanging = createServer((req, _res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => taken.push({ path: req.url!, headers: req.headers, body }));
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const env = { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`, HERALD_API_KEY: 'hrld_live_notchecked' };
    const interrupted = (args: string[]) => {
      const from = taken.length;
      return runCli(args, { env, whileRunning: (child) => waitFor(async () => taken.length > from).then(() => child.kill('SIGINT')) }).then((res) => ({ res, request: taken[from] }));
    };
    const commands = [
      ['broadcast', '--subject', 'Upgrade', '--body', 'Tonight', '--category', 'governance'],
      ['schedule', 'once', ...flags('Once'), '--at', '2030-06-01T09:00'],
      ['schedule', 'cron', ...flags('Weekly'), '--cron', '0 9 * * MON'],
      ['webhook', 'create', '--url', 'https://hooks.example.com/h'],
      ['webhook', 'rotate-secret', 'wh_x'],
      ['template', 'create', '--name', 'Alert', '--category', 'defi', '--subject', 's', '--html', '<p>h</p>', '--text', 't'],
      ['template', 'update', 'tmpl_x', '--subject', 'Now'],
      ['template', 'restore', 'tmpl_x', '1'],
    ];
    try {
      for (const args of commands) {
        const { res, request } = await interrupted([...args, '--json']);
        assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
        assert.equal(res.stdout, '');
        const { error } = res.errorJson();
        assert.equal(error.code, 'CANCELLED');
        assert.equal(error.message, 'Cancelled: the request may have reached the gateway');
        assert.match(error.idempotencyKey, GENERATED, args.join(' '));
        assert.equal(request.headers['idempotency-key'], error.idempotencyKey, `${args.join(' ')}: the key the request carried`);
      }
      // A key given is named alike; people are told what running again with it does.
      const { res } = await interrupted([...commands[4], '--idempotency-key', 'rotate-1']);
      assert.equal(res.code, 2);
      assert.match(res.stderr, /Error: Cancelled: the request may have reached the gateway/);
      assert.match(res.stderr, /Re-running with --idempotency-key rotate-1 does not rotate it twice\./);
      // notify send goes the same way, its key in the body.
      const send = await interrupted(['notify', 'send', ...flags('Interrupted'), '--json']);
      assert.equal(send.res.code, 2);
      assert.equal(send.res.errorJson().error.message, 'Cancelled: the send may have reached the gateway');
      assert.equal(JSON.parse(send.request.body).idempotencyKey, send.res.errorJson().error.idempotencyKey);
    } finally {
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });

  it('broadcast --from-stdin takes an idempotencyKey in the object as the request key; the flag wins', async () => {
    const acme = await gw.createProtocol({ tier: 3 });
    await call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['email'] });
    const stdin = JSON.stringify({ subject: 'From stdin', body: 'Body', category: 'governance', idempotencyKey: 'stdin-key-1' });
    const run = (args: string[] = []) =>
      runCli(['broadcast', '--from-stdin', '--json', ...args], { env: { HOME: scratch.home, XDG_CONFIG_HOME: scratch.config, HERALD_BASE_URL: gw.url, HERALD_API_KEY: acme.apiKey }, input: stdin });
    const first = await run();
    assert.equal(first.code, 0, first.stderr);
    const again = await run();
    assert.equal(again.json().broadcast_id, first.json().broadcast_id);
    const flagged = await run(['--idempotency-key', 'flag-key-1']);
    assert.notEqual(flagged.json().broadcast_id, first.json().broadcast_id);
    const rows = await gw.herald.deps.db.query<{ idempotency_key: string }>('SELECT idempotency_key FROM creation_keys WHERE protocol_id = $1 ORDER BY idempotency_key', [acme.id]);
    assert.deepEqual(rows.map((r) => r.idempotency_key), ['flag-key-1', 'stdin-key-1']);
  });
});
