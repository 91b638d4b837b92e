import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Herald, HeraldAdmin } from '../../packages/sdk/src/client.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

const collect = async <T>(items: AsyncIterable<T>, each: (index: number) => Promise<void> = async () => {}): Promise<T[]> => {
  const out: T[] = [];
  for await (const item of items) {
    out.push(item);
    await each(out.length);
  }
  return out;
};

describe('SDK listAll: every item of a paged list, against a live gateway', () => {
  let gw: TestGateway;
  let herald: Herald;
  let wallet: string;
  const message = (i: number) => ({ wallet, subject: `Position ${i}`, body: 'Health factor 1.05', category: 'defi' as const });
  const sendMany = async (count: number, from: number) => {
    for (let i = 0; i < count; i += 100) {
      const n = Math.min(100, count - i);
      await herald.notifications.sendBulk(Array.from({ length: n }, (_, j) => message(from + i + j)));
    }
  };

  before(async () => {
    // No worker: the notifications stay `queued`, so a status filter keeps matching them.
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000' } });
    const acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    herald = new Herald({ apiKey: acme.apiKey, baseUrl: gw.url });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
  });
  after(() => gw.close());

  it('notifications.listAll yields the list as it stood, newest first, while new sends arrive', async () => {
    await sendMany(230, 0);
    const snapshot = [];
    for (let page = 1; page <= 3; page++) snapshot.push(...(await herald.notifications.list({ status: 'queued', page, limit: 100 })).data);
    assert.equal(snapshot.length, 230);

    // 40 more sends after the first item read: the older ones move down by 40 places.
    const read = await collect(herald.notifications.listAll({ status: 'queued' }), async (n) => {
      if (n === 1) await sendMany(40, 1000);
    });
    assert.deepEqual(read.map((item) => item.notification_id), snapshot.map((item) => item.notification_id));
    assert.equal((await herald.notifications.list({ status: 'queued' })).total, 270);

    const small = await collect(herald.notifications.listAll({ status: 'queued', limit: 7 }));
    assert.equal(small.length, 270);
    assert.equal(new Set(small.map((item) => item.notification_id)).size, 270);
    assert.deepEqual(await collect(herald.notifications.listAll({ status: 'delivered' })), []);
  });

  it('schedules.listAll pages through with the limit given', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await herald.schedules.cron({ ...message(i), cronExpr: `${i} 9 * * *` })).id);
    const schedules = await collect(herald.schedules.listAll({ limit: 2 }));
    assert.deepEqual(schedules.map((schedule) => schedule.id), ids.reverse());
  });

  it('notifications.listAll yields each notification once while sends land during its reads', async () => {
    const snapshot = new Set<string>();
    for (let page = 1; ; page++) {
      const { data, total } = await herald.notifications.list({ status: 'queued', page, limit: 100 });
      for (const item of data) snapshot.add(item.notification_id);
      if (page * 100 >= total) break;
    }
    // Sends one after another the whole time: some land between a page's count and its rows.
    let sending = true;
    const sender = (async () => {
      for (let i = 0; sending; i++) await herald.notifications.send(message(2000 + i));
    })();
    const read = await collect(herald.notifications.listAll({ status: 'queued', limit: 10 }));
    sending = false;
    await sender;
    const ids = read.map((item) => item.notification_id);
    assert.equal(new Set(ids).size, ids.length, 'no notification twice');
    assert.deepEqual([...snapshot].filter((id) => !ids.includes(id)), [], 'every notification there before the loop');
  });

  it('admin.protocols.listAll yields every protocol once while another is created', async () => {
    const admin = new HeraldAdmin({ adminToken: ADMIN_TOKEN, baseUrl: gw.url });
    for (let i = 0; i < 4; i++) await gw.createProtocol({ tier: 0, name: `Other ${i}` });
    const before = (await admin.protocols.list({ limit: 100 })).data.map((protocol) => protocol.id);
    assert.equal(before.length, 5);
    const read = await collect(admin.protocols.listAll({ limit: 2 }), async (n) => {
      if (n === 2) await gw.createProtocol({ tier: 0, name: 'Late' });
    });
    assert.deepEqual(read.map((protocol) => protocol.id), before);
  });
});

describe('SDK listAll of captured messages and webhook deliveries', () => {
  let gw: TestGateway;
  let herald: Herald;
  let sandbox: Herald;
  let admin: HeraldAdmin;
  let acmeId: string;
  let wallet: string;
  let receiver: Receiver;

  before(async () => {
    gw = await startGateway({ env: { HERALD_WORKER_POLL_MS: '50', HERALD_IP_RATE_LIMIT: '10000', HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    const acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    acmeId = acme.id;
    herald = new Herald({ apiKey: acme.apiKey, baseUrl: gw.url });
    sandbox = new Herald({ apiKey: acme.sandboxApiKey, baseUrl: gw.url });
    admin = new HeraldAdmin({ adminToken: ADMIN_TOKEN, baseUrl: gw.url });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await gw.close();
  });

  it('sandbox.listAllMessages and admin.sandbox.listAllMessages yield every captured message once, newest first', async () => {
    await sandbox.notifications.sendBulk(Array.from({ length: 12 }, (_, i) => ({ wallet, subject: `Captured ${i}`, body: 'Hello', category: 'system' as const })));
    const deadline = Date.now() + 20_000;
    while ((await sandbox.sandbox.messages({ wallet })).total < 12) {
      assert.ok(Date.now() < deadline, 'the 12 messages were not captured in time');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const snapshot = (await sandbox.sandbox.messages({ wallet, limit: 100 })).data.map((message) => message.id);
    assert.equal(snapshot.length, 12);
    assert.deepEqual((await collect(sandbox.sandbox.listAllMessages({ wallet, limit: 5 }))).map((message) => message.id), snapshot);
    const operator = await collect(admin.sandbox.listAllMessages({ protocolId: acmeId, wallet, limit: 5 }));
    assert.deepEqual(operator.map((message) => message.id), snapshot);
    assert.ok(operator.every((message) => message.protocolId === acmeId));
  });

  it('webhooks.listAllDeliveries yields every logged delivery once while test sends are added', async () => {
    const endpoint = await herald.webhooks.create({ url: receiver.url, events: ['notification.delivered'] });
    for (let i = 0; i < 5; i++) assert.deepEqual(await herald.webhooks.test(endpoint.id), { sent: true });
    const snapshot = (await herald.webhooks.deliveries(endpoint.id, { limit: 100 })).data.map((delivery) => delivery.id);
    assert.equal(snapshot.length, 5);
    const read = await collect(herald.webhooks.listAllDeliveries(endpoint.id, { limit: 2 }), async (n) => {
      if (n === 1) await herald.webhooks.test(endpoint.id);
    });
    assert.deepEqual(read.map((delivery) => delivery.id), snapshot);
  });
});
