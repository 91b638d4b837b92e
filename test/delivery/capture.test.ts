import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TrackingLinks } from '../../packages/server/src/engagement/tracking-links.js';
import { ADMIN_TOKEN, call, isErrorBody, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { newWallet, register, verify } from '../identities/wallet-key.js';
import { registeredWallet } from '../support/wallets.js';

describe('delivery through the capture provider, engagement links', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let rival: TestProtocol;
  let wallet: string;

  before(async () => {
    gw = await startGateway({ env: { HERALD_WORKER_POLL_MS: '50', HERALD_IP_RATE_LIMIT: '10000' } });
    acme = await gw.createProtocol({ tier: 2, name: 'Acme' });
    rival = await gw.createProtocol({ tier: 2 });
    wallet = await registeredWallet(gw.url, { email: 'reader@example.com', telegramChatId: '5' });
  });
  after(() => gw.close());

  const delivered = (id: string, key = acme.apiKey) =>
    waitFor(async () => {
      const res = await call(gw.url, key, 'GET', `/v1/notifications/${id}`);
      return res.body.status === 'delivered' ? res.body : undefined;
    });

  it('delivers a queued notification and records the attempt and the event', async () => {
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', {
      wallet,
      subject: 'Position update',
      body: 'See [your dashboard](https://app.example.com/dash)',
      category: 'defi',
      preferredChannel: 'email',
    });
    assert.equal(sent.status, 202);
    const record = await delivered(sent.body.notificationId);
    assert.equal(record.delivery_channel, 'email');
    assert.ok(Date.parse(record.delivered_at) >= Date.parse(record.created_at));
    assert.equal(record.attempts.length, 1);
    assert.equal(record.attempts[0].provider, 'capture');
    assert.equal(record.attempts[0].outcome, 'delivered');
    const events = await gw.herald.deps.db.query(`SELECT type, data FROM events WHERE data->>'notification_id' = $1`, [sent.body.notificationId]);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'notification.delivered');
    assert.equal(events[0].data.delivered_at, record.delivered_at);
    assert.equal(events[0].data.channel, 'email');
    assert.equal(events[0].data.wallet, wallet);
    assert.equal(events[0].data.environment, 'production');
  });

  it('lists captured messages for the protocol only, filtered and paginated', async () => {
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 'TG', body: 'hello *there*', category: 'system' });
    await delivered(sent.body.notificationId);
    const tg = await call(gw.url, acme.apiKey, 'GET', `/v1/sandbox/messages?channel=telegram&wallet=${wallet}`);
    assert.equal(tg.status, 200);
    assert.equal(tg.body.data[0].notificationId, sent.body.notificationId);
    assert.equal(tg.body.data[0].channel, 'telegram');
    assert.match(tg.body.data[0].text, /<b>TG<\/b>/);
    assert.ok(!JSON.stringify(tg.body).includes('reader@example.com'));
    const all = await call(gw.url, acme.apiKey, 'GET', '/v1/sandbox/messages?limit=1');
    assert.equal(all.body.data.length, 1);
    assert.ok(all.body.total >= 2);
    const theirs = await call(gw.url, rival.apiKey, 'GET', '/v1/sandbox/messages');
    assert.equal(theirs.body.total, 0);
    const bad = await call(gw.url, acme.apiKey, 'GET', '/v1/sandbox/messages?channel=fax');
    assert.equal(bad.status, 400);
    assert.ok(isErrorBody(bad.body));
  });

  it("lets the operator read every captured message, the gateway's own verification codes included, which no protocol sees", async () => {
    const holder = newWallet();
    assert.equal((await register(gw, holder, { email: 'holder@example.com' })).status, 201);
    const codes = await call(gw.url, ADMIN_TOKEN, 'GET', `/v1/admin/sandbox/messages?protocolId=herald&wallet=${holder.address}`);
    assert.equal(codes.status, 200, JSON.stringify(codes.body));
    assert.equal(codes.body.total, 1);
    const [code] = codes.body.data;
    assert.deepEqual([code.protocolId, code.environment, code.channel, code.wallet], ['herald', 'production', 'email', holder.address]);
    const digits = /\b(\d{6})\b/.exec(code.text)![1];
    assert.equal((await verify(gw, holder.address, 'email', digits)).status, 200, 'the code read there verifies the address');
    for (const key of [acme.apiKey, acme.sandboxApiKey, rival.apiKey]) {
      assert.equal((await call(gw.url, key, 'GET', `/v1/sandbox/messages?wallet=${holder.address}`)).body.total, 0, 'no protocol sees codes');
    }
    // Every protocol's messages too, each naming its protocol; filters as the protocols' list.
    const everything = await call(gw.url, ADMIN_TOKEN, 'GET', '/v1/admin/sandbox/messages?limit=100');
    assert.ok(new Set(everything.body.data.map((m: { protocolId: string }) => m.protocolId)).has(acme.id));
    const acmeOnly = await call(gw.url, ADMIN_TOKEN, 'GET', `/v1/admin/sandbox/messages?protocolId=${acme.id}&channel=telegram&limit=1`);
    assert.deepEqual([acmeOnly.body.data.length, acmeOnly.body.data[0].protocolId, acmeOnly.body.data[0].channel], [1, acme.id, 'telegram']);
    // Only with the admin token.
    for (const key of [acme.apiKey, undefined, 'wrong-admin-token-0123456789']) {
      const refused = await call(gw.url, key, 'GET', '/v1/admin/sandbox/messages');
      assert.equal(refused.status, 401);
      assert.ok(isErrorBody(refused.body));
    }
    assert.equal((await call(gw.url, ADMIN_TOKEN, 'GET', '/v1/admin/sandbox/messages?channel=fax')).status, 400);
  });

  it('delivers sandbox sends to capture', async () => {
    const sent = await call(gw.url, acme.sandboxApiKey, 'POST', '/v1/notify', { wallet, subject: 'Sandbox', body: 'b', category: 'system' });
    assert.equal(sent.body.environment, 'sandbox');
    await delivered(sent.body.notificationId, acme.sandboxApiKey);
    const list = await call(gw.url, acme.apiKey, 'GET', '/v1/sandbox/messages');
    assert.ok(list.body.data.some((m: any) => m.notificationId === sent.body.notificationId && m.environment === 'sandbox'));
    // Endpoints receive both environments' events: the data says which one this was.
    const [event] = await gw.herald.deps.db.query(`SELECT type, data FROM events WHERE data->>'notification_id' = $1`, [sent.body.notificationId]);
    assert.deepEqual([event.type, event.data.environment], ['notification.delivered', 'sandbox']);
  });

  it('tracks opens and clicks through signed links and refuses forged ones', async () => {
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', {
      wallet,
      subject: 'Links',
      body: 'Go [here](https://dest.example.org/path?q=1)',
      category: 'governance',
      preferredChannel: 'email',
    });
    await delivered(sent.body.notificationId);
    const list = await call(gw.url, acme.apiKey, 'GET', '/v1/sandbox/messages?channel=email&limit=1');
    const html: string = list.body.data[0].html;
    const pixel = html.match(/src="([^"]*\/track\/open\/[^"]+)"/)![1];
    const click = html.match(/href="([^"]*\/track\/click\/[^"]+)"/)![1].replace(/&amp;/g, '&');
    assert.ok(!html.includes('href="https://dest.example.org'), 'body links go through the click redirect');

    // A HEAD (a link checker) answers as a GET does and records nothing.
    const checked = await fetch(pixel.replace(/^https?:\/\/[^/]+/, gw.url), { method: 'HEAD' });
    assert.deepEqual([checked.status, checked.headers.get('content-type')], [200, 'image/gif']);
    const checkedClick = await fetch(click.replace(/^https?:\/\/[^/]+/, gw.url), { method: 'HEAD', redirect: 'manual' });
    assert.deepEqual([checkedClick.status, checkedClick.headers.get('location')], [302, 'https://dest.example.org/path?q=1']);

    const open = await fetch(pixel.replace(/^https?:\/\/[^/]+/, gw.url));
    assert.equal(open.status, 200);
    assert.equal(open.headers.get('content-type'), 'image/gif');

    const go = await fetch(click.replace(/^https?:\/\/[^/]+/, gw.url), { redirect: 'manual' });
    assert.equal(go.status, 302);
    assert.equal(go.headers.get('location'), 'https://dest.example.org/path?q=1');

    const token = click.split('/track/click/')[1];
    const [payload, mac] = token.split('.');
    const evil = Buffer.from(JSON.stringify([sent.body.notificationId, 'https://evil.example'])).toString('base64url');
    for (const forged of [`${evil}.${mac}`, `${payload}.${mac.slice(0, -2)}xx`, 'garbage', `${payload}`]) {
      const res = await fetch(`${gw.url}/track/click/${forged}`, { redirect: 'manual' });
      assert.equal(res.status, 404, forged);
      assert.ok(isErrorBody(await res.json()));
    }
    const rows = await gw.herald.deps.db.query(`SELECT kind, url FROM engagement_events WHERE notification_id = $1 ORDER BY id`, [sent.body.notificationId]);
    assert.deepEqual(
      rows.map((r: any) => [r.kind, r.url]),
      [
        ['open', null],
        ['click', 'https://dest.example.org/path?q=1'],
      ],
    );
  });

  it('unsubscribes with the RFC 8058 one-click POST, after a GET confirmation page', async () => {
    const w = await registeredWallet(gw.url, { email: 'leaver@example.com' });
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet: w, subject: 'Bye', body: 'b', category: 'marketing' });
    await delivered(sent.body.notificationId);
    const list = await call(gw.url, acme.apiKey, 'GET', `/v1/sandbox/messages?wallet=${w}`);
    const html: string = list.body.data[0].html;
    const link = html.match(/href="([^"]*\/unsubscribe\/[^"]+)"/)![1].replace(/^https?:\/\/[^/]+/, gw.url);

    const page = await fetch(link);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<form method="post"/);
    // the GET changed nothing
    assert.equal((await call(gw.url, acme.apiKey, 'GET', `/v1/subscriptions/${w}`)).body.subscribed, false);
    assert.equal((await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet: w, subject: 's', body: 'b', category: 'defi' })).body.status, 'queued');

    const post = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    assert.equal(post.status, 200);
    const after = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet: w, subject: 's', body: 'b', category: 'defi' });
    assert.equal(after.body.status, 'opted_out');
    // only this protocol lost the wallet
    assert.equal((await call(gw.url, rival.apiKey, 'POST', '/v1/notify', { wallet: w, subject: 's', body: 'b', category: 'defi' })).body.status, 'queued');
    const bad = await fetch(`${gw.url}/unsubscribe/forged.token`, { method: 'POST' });
    assert.equal(bad.status, 404);
    assert.equal((await bad.json()).code, 'NOT_FOUND');

    // A broken link: a page for a browser, the error body for any other client.
    const browser = await fetch(`${gw.url}/unsubscribe/forged.token`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    assert.equal(browser.status, 404);
    assert.equal(browser.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(await browser.text(), /This unsubscribe link is not valid/);
    for (const [path, accept] of [['/unsubscribe/forged.token', '*/*'], ['/unsubscribe/', 'application/json'], ['/unsubscribe/x', 'text/html;q=0, application/json']]) {
      const res = await call(gw.url, undefined, 'GET', path, undefined, { accept });
      assert.equal(res.status, 404, path);
      assert.ok(isErrorBody(res.body), JSON.stringify(res.body));
      assert.equal(res.body.code, 'NOT_FOUND');
    }
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');

    // A one-click POST with a broken link, from a browser's form: the page too.
    const form = await fetch(`${gw.url}/unsubscribe/forged.token`, {
      method: 'POST',
      headers: { accept: 'text/html,*/*;q=0.8', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    assert.equal(form.status, 404);
    assert.equal(form.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(await form.text(), /This unsubscribe link is not valid/);
  });

  it('leaves a link too long for a tracking token as it is written, and tracks the others', async () => {
    const long = `https://long.example/?q=${'b'.repeat(3500)}`;
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', {
      wallet,
      subject: 'Long link',
      body: `[long](${long}) and [short](https://short.example/)`,
      category: 'defi',
      preferredChannel: 'email',
    });
    await delivered(sent.body.notificationId);
    const list = await call(gw.url, acme.apiKey, 'GET', '/v1/sandbox/messages?channel=email&limit=1');
    const html: string = list.body.data[0].html;
    assert.ok(html.includes(`href="${long}"`), 'the long link is left untracked');
    const clicks = [...html.matchAll(/href="([^"]*\/track\/click\/[^"]+)"/g)].map((m) => m[1].replace(/^https?:\/\/[^/]+/, gw.url));
    assert.equal(clicks.length, 1);
    const go = await fetch(clicks[0], { redirect: 'manual' });
    assert.deepEqual([go.status, go.headers.get('location')], [302, 'https://short.example/']);
  });

  it('shows a browser a page for a broken click link', async () => {
    const browser = await fetch(`${gw.url}/track/click/garbage`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }, redirect: 'manual' });
    assert.equal(browser.status, 404);
    assert.equal(browser.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(await browser.text(), /This tracking link is not valid/);
    // A genuine link whose address no parser reads (signed before such links were left untracked) is refused alike.
    const links = new TrackingLinks(gw.herald.deps.secrets, gw.herald.deps.config.publicUrl);
    const token = links.link('click', { notificationId: 'n1', url: 'https://exa mple.com/' }).split('/track/click/')[1];
    const res = await fetch(`${gw.url}/track/click/${token}`, { redirect: 'manual' });
    assert.equal(res.status, 404);
    assert.equal((await res.json()).code, 'NOT_FOUND');
  });

  it("redirects a template's links with characters a header cannot carry to their encoded form", async () => {
    const template = await call(gw.url, acme.apiKey, 'POST', '/v1/templates/email', {
      name: 'Links',
      category: 'defi',
      subjectTemplate: 'Links',
      htmlSource:
        '<p><a href="https://shop.example/商品/{{id}}">cjk</a> <a href="https://café.example/menü?q=é">latin</a>' +
        ' <a href="https://app.example/{{path}}">split</a> <a href="https://exa mple.com/">broken</a></p>',
      textSource: 'links',
    });
    assert.equal(template.status, 201, JSON.stringify(template.body));
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', {
      wallet,
      subject: 's',
      body: 'b',
      category: 'defi',
      preferredChannel: 'email',
      templateId: template.body.templateId,
      templateVariables: { id: '42', path: 'a\nb' },
    });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    await delivered(sent.body.notificationId);
    const list = await call(gw.url, acme.apiKey, 'GET', `/v1/sandbox/messages?channel=email&limit=1`);
    const html: string = list.body.data[0].html;
    const clicks = [...html.matchAll(/href="([^"]*\/track\/click\/[^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&').replace(/^https?:\/\/[^/]+/, gw.url));
    const locations = [];
    for (const click of clicks) {
      const res = await fetch(click, { redirect: 'manual' });
      assert.equal(res.status, 302);
      locations.push(res.headers.get('location'));
    }
    assert.deepEqual(locations, [
      'https://shop.example/%E5%95%86%E5%93%81/42',
      'https://xn--caf-dma.example/men%C3%BC?q=%C3%A9',
      'https://app.example/ab',
    ]);
    // A link no URL parser reads is left as the template wrote it, without tracking.
    assert.ok(html.includes('href="https://exa mple.com/"'));
    const rows = await gw.herald.deps.db.query(`SELECT url FROM engagement_events WHERE notification_id = $1 AND kind = 'click' ORDER BY id`, [sent.body.notificationId]);
    assert.deepEqual(rows.map((r: any) => r.url), locations);
  });
});
