/**
 * The database drops its connections while a chain is sending (a TCP proxy between the gateway
 * and PostgreSQL is cut for a moment): the chain's records of what it sent, its failed attempts
 * and its reads of the endpoint wait for the database instead of ending the chain, so nothing is
 * sent twice and nothing stays leased, held back, until the lease runs out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freshSchema, onPostgres, sleep, type TestProtocol } from '../support/gateway.js';
import { proxyDatabase, type TcpProxy } from '../reliability/support/tcp-proxy.js';
import { deliveriesOf, recordNotificationEvent, registerHook, startHarness, type Harness } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

const OUTAGE_MS = 700;

describe('webhook chains through a short database outage', { skip: !onPostgres && 'needs DATABASE_URL (PostgreSQL)', timeout: 60_000 }, () => {
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  let proxy: TcpProxy;
  let h: Harness;
  let receiver: Receiver;
  let acme: TestProtocol;

  before(async () => {
    schema = await freshSchema();
    let proxied: string;
    ({ proxy, url: proxied } = await proxyDatabase(schema.url));
    [h, receiver] = await Promise.all([startHarness({ DATABASE_URL: proxied }), startReceiver()]);
    acme = await h.gw.createProtocol({ tier: 3 });
  });
  after(async () => {
    await proxy?.restore().catch(() => {});
    await receiver?.close();
    await h?.close();
    await proxy?.close();
    await schema?.drop();
  });

  it('records what was sent once the database is back, and sends every event once', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/outage`, ['notification.delivered']);
    const events: string[] = [];
    for (let i = 0; i < 6; i++) events.push(await recordNotificationEvent(h, acme.id, 'notification.delivered', `n_outage_${i}`));
    // The database goes away while the first request is at the receiver (answered 200: its success
    // waits to be recorded, and the next request's read of the endpoint with it) and again during
    // the fourth (answered 500: its failed attempt waits to be recorded).
    const outage = () => {
      void proxy.cut().then(async () => {
        await sleep(OUTAGE_MS);
        await proxy.restore();
      });
    };
    receiver.answer = () => {
      const n = receiver.requests.length;
      if (n === 1 || n === 4) outage();
      return { status: n === 4 ? 500 : 200, body: 'ok', delayMs: 50 };
    };

    const started = Date.now();
    await h.drain();
    const tookMs = Date.now() - started;

    const sent = receiver.requests.map((r) => JSON.parse(r.body).id as string);
    assert.deepEqual(sent, events, 'each event was requested once, in order');
    const { data } = await deliveriesOf(h, acme.apiKey, hook.id, '?limit=100');
    const byEvent = new Map<string, any>(data.map((d: any) => [d.eventId, d]));
    assert.deepEqual(
      events.map((id) => [byEvent.get(id)?.status, byEvent.get(id)?.attempts.length]),
      events.map((_, i) => (i === 3 ? ['pending', 1] : ['succeeded', 1])),
      JSON.stringify(data),
    );
    // The lease is a minute: a chain that gave up would have left the rest leased that long.
    assert.ok(tookMs < 20_000, `the chain finished in ${tookMs} ms`);
  });
});
