import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../packages/server/src/ids.js';
import { resolveWebhookTarget } from '../../packages/server/src/webhooks/resolve-target.js';
import { WebhookSender } from '../../packages/server/src/webhooks/webhook-sender.js';
import { call, isErrorBody, type TestProtocol } from '../support/gateway.js';
import { deliveriesOf, recordNotificationEvent, startHarness, type Harness } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

describe('webhook SSRF guard (private targets not allowed)', () => {
  let h: Harness;
  let receiver: Receiver;
  let acme: TestProtocol;

  before(async () => {
    [h, receiver] = await Promise.all([startHarness({ HERALD_ALLOW_PRIVATE_WEBHOOKS: 'false' }), startReceiver()]);
    acme = await h.gw.createProtocol({ tier: 3 });
  });
  after(async () => {
    await receiver.close();
    await h.close();
  });

  const refused: [string, RegExp][] = [
    ['http://127.0.0.1/hook', /127\.0\.0\.1 is a loopback address/],
    ['http://127.8.9.10:8080/hook', /loopback/],
    ['http://10.0.0.7/hook', /10\.0\.0\.7 is a private address/],
    ['http://172.20.1.1/hook', /private/],
    ['http://192.168.0.10/hook', /private/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
    ['http://100.64.0.1/', /carrier-grade NAT/],
    ['http://0.0.0.0:3000/', /unspecified/],
    ['http://224.0.0.1/', /multicast/],
    ['http://[::1]:3000/hook', /::1 is a loopback address/],
    ['http://[::]/', /unspecified/],
    ['http://[fd00::1]/hook', /fd00::1 is a unique-local address/],
    ['http://[fe80::1]/hook', /link-local/],
    ['http://[::ffff:127.0.0.1]/hook', /::ffff:7f00:1 is a loopback address/],
    ['http://[::ffff:10.1.1.1]/hook', /private/],
    ['http://localhost:3000/hook', /^url is refused: localhost does not resolve to a public address; webhooks may only reach public addresses$/],
    // A name with no answer reads as one with a private answer: which internal names exist is not told.
    ['http://no-such-host.invalid/hook', /^url is refused: no-such-host\.invalid does not resolve to a public address; webhooks may only reach public addresses$/],
  ];
  for (const [url, reason] of refused) {
    it(`refuses to register ${url}`, async () => {
      const res = await call(h.gw.url, acme.apiKey, 'POST', '/v1/webhooks', { url, events: ['quota.exceeded'] });
      assert.equal(res.status, 400);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, /^url is refused: /);
      assert.match(res.body.message, reason);
    });
  }

  it('refuses IPv4 addresses written otherwise than in four decimals, and the send-time check reads them as the address they are', async () => {
    for (const [url, written] of [
      ['http://2130706433/hook', '2130706433'],
      ['http://0x7f.1/hook', '0x7f.1'],
    ]) {
      const res = await call(h.gw.url, acme.apiKey, 'POST', '/v1/webhooks', { url, events: ['quota.exceeded'] });
      assert.equal(res.status, 400);
      assert.equal(res.body.message, `url must write an IPv4 address as four decimal numbers (${written} is 127.0.0.1)`);
      // An endpoint stored before that rule is still checked before every send.
      await assert.rejects(resolveWebhookTarget(url, { allowPrivate: false }), /127\.0\.0\.1 is a loopback address/);
    }
  });

  it('refuses to change an endpoint’s url to a private target', async () => {
    // Registered while the check could not be made (another configuration), as an operator might have.
    const id = await insertEndpoint(h, acme.id, 'https://hooks.example.com/a');
    const res = await call(h.gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${id}`, { url: 'http://169.254.169.254/' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'VALIDATION_ERROR');
    assert.match(res.body.message, /link-local/);
    const list = await call(h.gw.url, acme.apiKey, 'GET', '/v1/webhooks');
    assert.equal(list.body.find((w: any) => w.id === id).url, 'https://hooks.example.com/a');
  });

  it('checks again at send time: the attempt fails with the reason and no request is made', async () => {
    const id = await insertEndpoint(h, acme.id, `${receiver.url}/private`);
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    assert.equal(receiver.requests.length, 0);
    const [delivery] = (await deliveriesOf(h, acme.apiKey, id)).data;
    assert.equal(delivery.status, 'pending');
    assert.equal(delivery.attempts.length, 1);
    const [attempt] = delivery.attempts;
    assert.equal(attempt.statusCode, null);
    assert.equal(attempt.responseBody, null);
    assert.equal(attempt.error, 'not sent: 127.0.0.1 is a loopback address; webhooks may only reach public addresses');

    const test = await call(h.gw.url, acme.apiKey, 'POST', `/v1/webhooks/${id}/test`);
    assert.deepEqual(test.body, { sent: false });
    assert.equal(receiver.requests.length, 0);
  });

  it('says a resolver failing for now failed, in the same words for every name, rather than calling the name private', async () => {
    const failing = (code: string) =>
      new WebhookSender({ allowPrivate: false, timeoutMs: 1000, now: () => new Date(), lookup: async () => Promise.reject(Object.assign(new Error('dns'), { code })) });
    for (const [code, message] of [
      ['EAI_AGAIN', 'hooks.example.com could not be resolved (EAI_AGAIN)'],
      ['ENOTFOUND', 'hooks.example.com does not resolve to a public address; webhooks may only reach public addresses'],
      ['ENODATA', 'hooks.example.com does not resolve to a public address; webhooks may only reach public addresses'],
    ]) {
      const sender = failing(code);
      const target = await sender.target('https://hooks.example.com/x');
      assert.ok(target instanceof Error);
      assert.equal(target.message, message, code);
      sender.close();
    }
  });

  it('refuses a host with one private address among public ones', async () => {
    const sender = new WebhookSender({
      allowPrivate: false,
      timeoutMs: 1000,
      now: () => new Date(),
      lookup: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ],
    });
    const target = await sender.target('https://mixed.example.com/hook');
    assert.ok(target instanceof Error);
    assert.equal(target.message, 'mixed.example.com does not resolve to a public address; webhooks may only reach public addresses');
    sender.close();
  });

  it('connects to the address it resolved and checked, not to a fresh DNS answer (no rebinding)', async () => {
    let lookups = 0;
    const sender = new WebhookSender({
      allowPrivate: true,
      timeoutMs: 2000,
      now: () => new Date(),
      // "rebind.test" exists for this resolver only: the system resolver cannot find it.
      lookup: async () => {
        lookups++;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const target = await sender.target(`http://rebind.test:${receiver.port}/pinned`);
    const result = await sender.send(target, 'whsec_test', '{"id":"evt_pin"}');
    sender.close();
    assert.equal(result.error, null);
    assert.equal(result.statusCode, 200);
    assert.equal(lookups, 1);
    const [request] = receiver.requests.filter((r) => r.path === '/pinned');
    assert.equal(request.headers.host, `rebind.test:${receiver.port}`);
    assert.equal(request.body, '{"id":"evt_pin"}');
  });
});

/** An endpoint row written directly, bypassing the registration check. */
async function insertEndpoint(h: Harness, protocolId: string, url: string): Promise<string> {
  const deps = h.gw.herald.deps;
  const id = newId.webhook();
  await deps.db.query(
    `INSERT INTO webhook_endpoints (id, protocol_id, url, events, secret_enc, created_at, updated_at) VALUES ($1, $2, $3, $4::text[], $5, $6, $6)`,
    [id, protocolId, url, ['notification.delivered'], deps.secrets.encrypt('whsec_direct'), deps.now()],
  );
  return id;
}
