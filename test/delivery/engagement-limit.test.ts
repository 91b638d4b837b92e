import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { atNextSecond, call, isErrorBody, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';

const LINK_LIMIT = 5;

describe('engagement links: their own per-IP limit', () => {
  let gw: TestGateway;
  let acme: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_WORKER_POLL_MS: '50', HERALD_IP_RATE_LIMIT: '10000', HERALD_LINK_RATE_LIMIT: String(LINK_LIMIT) } });
    acme = await gw.createProtocol({ tier: 2, name: 'Acme' });
  });
  after(() => gw.close());

  /** The links of a delivered email to a new wallet, on the test gateway's address. */
  async function linksOfAnEmail() {
    const wallet = await registeredWallet(gw.url, { email: 'reader@example.com' });
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 'Links', body: 'Go [here](https://dest.example.org/a)', category: 'marketing' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const id: string = sent.body.notificationId;
    await waitFor(async () => (await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}`)).body.status === 'delivered');
    const html: string = (await call(gw.url, acme.apiKey, 'GET', `/v1/sandbox/messages?wallet=${wallet}`)).body.data[0].html;
    const local = (url: string) => url.replace(/&amp;/g, '&').replace(/^https?:\/\/[^/]+/, gw.url);
    return {
      id,
      wallet,
      open: local(html.match(/src="([^"]*\/track\/open\/[^"]+)"/)![1]),
      click: local(html.match(/href="([^"]*\/track\/click\/[^"]+)"/)![1]),
      unsubscribe: local(html.match(/href="([^"]*\/unsubscribe\/[^"]+)"/)![1]),
    };
  }

  const counted = async (id: string, kind: string) =>
    Number((await gw.herald.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM engagement_events WHERE notification_id = $1 AND kind = $2`, [id, kind]))[0].n);

  it('answers every open and click over the limit, and counts only those within it', async () => {
    const links = await linksOfAnEmail();
    const burst = 3 * LINK_LIMIT;
    await atNextSecond();
    const [opens, clicks] = await Promise.all([
      Promise.all(Array.from({ length: burst }, () => fetch(links.open))),
      Promise.all(Array.from({ length: burst }, () => fetch(links.click, { redirect: 'manual' }))),
    ]);
    for (const res of opens) {
      assert.deepEqual([res.status, res.headers.get('content-type')], [200, 'image/gif']);
      assert.equal(res.headers.get('x-ratelimit-limit'), String(LINK_LIMIT));
      assert.equal((await res.arrayBuffer()).byteLength > 0, true);
    }
    for (const res of clicks) assert.deepEqual([res.status, res.headers.get('location')], [302, 'https://dest.example.org/a']);
    // Both kinds share the IP's window: 2 × burst requests against a limit of 5 a second.
    assert.ok(opens.concat(clicks).some((res) => res.headers.get('x-ratelimit-remaining') === '0'));
    const recorded = (await counted(links.id, 'open')) + (await counted(links.id, 'click'));
    assert.ok(recorded >= 1 && recorded < 2 * burst, `${recorded} engagements recorded of ${2 * burst}`);
    assert.ok(recorded <= 2 * LINK_LIMIT, `${recorded} engagements recorded with a limit of ${LINK_LIMIT} a second`);
  });

  it('refuses a one-click unsubscribe over the limit with a 429, and takes it once the window has passed', async () => {
    const links = await linksOfAnEmail();
    await atNextSecond();
    await Promise.all(Array.from({ length: LINK_LIMIT }, () => fetch(links.open)));
    const refused = await fetch(links.unsubscribe, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    const body = await refused.json();
    assert.ok(isErrorBody(body));
    assert.equal(body.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(await counted(links.id, 'unsubscribe'), 0);
    assert.equal((await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet: links.wallet, subject: 's', body: 'b', category: 'defi' })).body.status, 'queued');

    // The confirmation page is still shown (it changes nothing).
    const page = await fetch(links.unsubscribe);
    assert.equal(page.status, 200);

    await atNextSecond();
    const taken = await fetch(links.unsubscribe, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    assert.equal(taken.status, 200);
    assert.equal((await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet: links.wallet, subject: 's', body: 'b', category: 'defi' })).body.status, 'opted_out');
  });

  it("keeps the links' count apart from the API's per-IP limit", async () => {
    await atNextSecond();
    const links = await Promise.all(Array.from({ length: 2 * LINK_LIMIT }, () => fetch(`${gw.url}/track/open/forged.token`)));
    assert.ok(links.every((res) => res.status === 200));
    const health = await fetch(`${gw.url}/health`);
    assert.equal(health.status, 200);
    assert.equal(health.headers.get('x-ratelimit-limit'), '10000');
  });
});
