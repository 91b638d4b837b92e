import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { atNextSecond, call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';

const EVENTS = ['notification.delivered', 'notification.bounced', 'notification.failed', 'receipt.confirmed', 'quota.exceeded'];

describe('webhook endpoints API', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let other: TestProtocol;

  before(async () => {
    // Private targets allowed: these tests are about the API, not the address policy (see ssrf.test.ts).
    gw = await startGateway({ env: { HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    acme = await gw.createProtocol({ tier: 3 });
    other = await gw.createProtocol({ tier: 3 });
  });
  after(() => gw.close());

  const create = (key: string, body: unknown) => call(gw.url, key, 'POST', '/v1/webhooks', body);

  it('registers an endpoint: 201 with the secret, shown once', async () => {
    const res = await create(acme.apiKey, { url: 'https://hooks.example.com/herald', events: ['notification.delivered', 'quota.exceeded'] });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), ['events', 'id', 'isActive', 'secret', 'url']);
    assert.match(res.body.id, /^wh_[0-9A-Z]{26}$/);
    assert.equal(res.body.url, 'https://hooks.example.com/herald');
    assert.deepEqual(res.body.events, ['notification.delivered', 'quota.exceeded']);
    assert.equal(res.body.isActive, true);
    assert.match(res.body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);

    const list = await call(gw.url, acme.apiKey, 'GET', '/v1/webhooks');
    assert.equal(list.status, 200);
    assert.ok(Array.isArray(list.body));
    const listed = list.body.find((w: any) => w.id === res.body.id);
    assert.deepEqual(listed, { id: res.body.id, url: res.body.url, events: res.body.events, isActive: true });
    assert.ok(!JSON.stringify(list.body).includes(res.body.secret));
  });

  it('keeps the secret only encrypted at rest', async () => {
    const res = await create(acme.apiKey, { url: 'http://127.0.0.1:9/at-rest', events: ['notification.failed'] });
    const [row] = await gw.herald.deps.db.query<{ secret_enc: string }>('SELECT secret_enc FROM webhook_endpoints WHERE id = $1', [res.body.id]);
    assert.ok(!row.secret_enc.includes(res.body.secret.slice(6)));
    assert.equal(gw.herald.deps.secrets.decrypt(row.secret_enc), res.body.secret);
  });

  it('accepts every event type', async () => {
    const res = await create(acme.apiKey, { url: 'http://localhost:8080/all', events: EVENTS });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.events, EVENTS);
  });

  it('lets the sandbox key read and test the shared endpoints, not register, change or delete them (they receive production events)', async () => {
    const live = await create(acme.apiKey, { url: 'http://127.0.0.1:9/shared', events: ['notification.delivered'] });
    assert.equal(live.status, 201);
    const sandbox = (method: string, path: string, body?: unknown) => call(gw.url, acme.sandboxApiKey, method, path, body);
    const refusals: [string, string, unknown, string][] = [
      ['POST', '/v1/webhooks', { url: 'http://attacker.example/collect', events: EVENTS }, 'Registering a webhook endpoint'],
      ['PATCH', `/v1/webhooks/${live.body.id}`, { url: 'http://attacker.example/collect' }, 'Changing a webhook endpoint'],
      ['PATCH', `/v1/webhooks/${live.body.id}`, { isActive: false }, 'Changing a webhook endpoint'],
      ['DELETE', `/v1/webhooks/${live.body.id}`, undefined, 'Deleting a webhook endpoint'],
    ];
    for (const [method, path, body, doing] of refusals) {
      const res = await sandbox(method, path, body);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.ok(isErrorBody(res.body));
      assert.deepEqual([res.body.code, res.body.message], ['FORBIDDEN', `${doing} needs a live key (hrld_live_…): webhook endpoints also receive production events`]);
    }
    // An unknown id is still a 404 for the sandbox key; a bad body is refused as the request is, 403.
    assert.equal((await sandbox('PATCH', '/v1/webhooks/wh_missing', { isActive: false })).status, 404);
    assert.equal((await sandbox('PATCH', '/v1/webhooks/wh_missing', { url: 42 })).status, 404);
    assert.equal((await sandbox('DELETE', '/v1/webhooks/wh_missing')).status, 404);
    assert.equal((await sandbox('POST', '/v1/webhooks', { url: 42, events: EVENTS })).status, 403);
    assert.equal((await sandbox('PATCH', `/v1/webhooks/${live.body.id}`, { url: 42, extra: true })).status, 403);
    assert.equal((await sandbox('PATCH', `/v1/webhooks/${live.body.id}`, {})).status, 403);
    // Nothing changed, and reading is allowed.
    const read = await sandbox('GET', `/v1/webhooks/${live.body.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual([read.body.url, read.body.isActive], ['http://127.0.0.1:9/shared', true]);
    assert.ok((await sandbox('GET', '/v1/webhooks')).body.some((w: any) => w.id === live.body.id));
    assert.equal((await sandbox('GET', `/v1/webhooks/${live.body.id}/deliveries`)).status, 200);
    assert.equal((await sandbox('POST', `/v1/webhooks/${live.body.id}/test`)).status, 200);
  });

  it('answers an empty id as every resource does: 404 NOT_FOUND for the path, not a webhook "" not found', async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/webhooks/', undefined],
      ['PATCH', '/v1/webhooks/', { isActive: true }],
      ['DELETE', '/v1/webhooks/', undefined],
      ['POST', '/v1/webhooks//test', undefined],
      ['GET', '/v1/webhooks//deliveries', undefined],
    ] as const) {
      for (const key of [acme.apiKey, acme.sandboxApiKey]) {
        const res = await call(gw.url, key, method, path, body);
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.deepEqual([res.body.code, res.body.message], ['NOT_FOUND', `Route ${method} ${path} not found`]);
      }
    }
  });

  it('lists only the caller’s endpoints, oldest first', async () => {
    const mine = await call(gw.url, acme.apiKey, 'GET', '/v1/webhooks');
    const theirs = await call(gw.url, other.apiKey, 'GET', '/v1/webhooks');
    assert.ok(mine.body.length >= 3);
    assert.deepEqual(theirs.body, []);
    const ids = mine.body.map((w: any) => w.id);
    assert.deepEqual(ids, [...ids].sort());
  });

  it('updates events, isActive and url, answering the updated object', async () => {
    const { body: hook } = await create(acme.apiKey, { url: 'https://a.example.com/1', events: ['notification.delivered'] });
    let res = await call(gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${hook.id}`, { events: ['receipt.confirmed', 'notification.failed'] });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { id: hook.id, url: hook.url, events: ['receipt.confirmed', 'notification.failed'], isActive: true });
    res = await call(gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${hook.id}`, { isActive: false });
    assert.deepEqual(res.body, { id: hook.id, url: hook.url, events: ['receipt.confirmed', 'notification.failed'], isActive: false });
    res = await call(gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${hook.id}`, { url: 'http://b.example.com/2', isActive: true });
    assert.deepEqual(res.body, { id: hook.id, url: 'http://b.example.com/2', events: ['receipt.confirmed', 'notification.failed'], isActive: true });
    assert.equal('secret' in res.body, false);
  });

  it('deletes with 204 and no body; the id is then unknown', async () => {
    const { body: hook } = await create(acme.apiKey, { url: 'https://a.example.com/gone', events: ['quota.exceeded'] });
    const res = await fetch(`${gw.url}/v1/webhooks/${hook.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${acme.apiKey}` } });
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    const again = await call(gw.url, acme.apiKey, 'DELETE', `/v1/webhooks/${hook.id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.code, 'WEBHOOK_NOT_FOUND');
    const list = await call(gw.url, acme.apiKey, 'GET', '/v1/webhooks');
    assert.ok(!list.body.some((w: any) => w.id === hook.id));
  });

  const invalid: [string, unknown, RegExp][] = [
    ['no url', { events: ['quota.exceeded'] }, /url is required/],
    ['no events', { url: 'https://a.example.com' }, /events is required/],
    ['empty events', { url: 'https://a.example.com', events: [] }, /events/],
    ['an unknown event type', { url: 'https://a.example.com', events: ['notification.opened'] }, /events\[0\] must be one of: notification\.delivered/],
    ['a repeated event type', { url: 'https://a.example.com', events: ['quota.exceeded', 'quota.exceeded'] }, /^events must not list the same value twice \(items 0 and 1 are the same\)$/],
    ['events as a string', { url: 'https://a.example.com', events: 'quota.exceeded' }, /events must be an array/],
    ['a url that is not a URL', { url: 'not a url', events: ['quota.exceeded'] }, /absolute http or https URL/],
    ['a relative url', { url: '/hooks/herald', events: ['quota.exceeded'] }, /absolute http or https URL/],
    ['an ftp url', { url: 'ftp://files.example.com/in', events: ['quota.exceeded'] }, /must use http or https, not ftp/],
    ['a javascript: url', { url: 'javascript:alert(1)', events: ['quota.exceeded'] }, /must use http or https/],
    ['credentials in the url', { url: 'https://user:pw@a.example.com/', events: ['quota.exceeded'] }, /user name or password/],
    ['a url with spaces at its ends', { url: ' https://a.example.com/in ', events: ['quota.exceeded'] }, /^url must not contain spaces or line breaks$/],
    ['a url with a line break', { url: 'https://a.example.com/\nin', events: ['quota.exceeded'] }, /^url must not contain spaces or line breaks$/],
    ['a url with a control character', { url: 'https://a.example.com/o\u007fk\u001f', events: ['quota.exceeded'] }, /^url must not contain control characters$/],
    ['a url with a backslash', { url: 'https://a.example.com\\in', events: ['quota.exceeded'] }, /^url must not contain a backslash \(write \/ instead\)$/],
    ['a url without // after its scheme', { url: 'http:a.example.com/in', events: ['quota.exceeded'] }, /^url must start with http:\/\/ or https:\/\/$/],
    ['a url with one slash after its scheme', { url: 'https:/a.example.com/in', events: ['quota.exceeded'] }, /^url must start with http:\/\/ or https:\/\/$/],
    ['an empty user name in the url', { url: 'http://@1.2.3.4/in', events: ['quota.exceeded'] }, /^url must not contain a user name or password$/],
    ['a url with an empty host', { url: 'http:///a.example.com/in', events: ['quota.exceeded'] }, /^url must name its host right after \/\/$/],
    ['a url with a .. segment', { url: 'https://a.example.com/a/../in', events: ['quota.exceeded'] }, /^url must not contain \. or \.\. path segments$/],
    ['a url with an encoded . segment', { url: 'https://a.example.com/%2E/in?x=1', events: ['quota.exceeded'] }, /^url must not contain \. or \.\. path segments$/],
    ['a url with a fragment', { url: 'https://a.example.com/in#part', events: ['quota.exceeded'] }, /^url must not contain a fragment \(#…\): no request carries it to the receiver$/],
    ['a url with an empty fragment', { url: 'https://a.example.com/in?x=1#', events: ['quota.exceeded'] }, /^url must not contain a fragment/],
    ['an IPv4 address in hex', { url: 'http://0x7f.1:4270/in', events: ['quota.exceeded'] }, /^url must write an IPv4 address as four decimal numbers \(0x7f\.1 is 127\.0\.0\.1\)$/],
    ['an IPv4 address as one number', { url: 'http://2130706433/in', events: ['quota.exceeded'] }, /^url must write an IPv4 address as four decimal numbers/],
    ['a url on port 0', { url: 'http://127.0.0.1:0/in', events: ['quota.exceeded'] }, /^url must not use port 0/],
    ['an overlong url', { url: `https://a.example.com/${'x'.repeat(2100)}`, events: ['quota.exceeded'] }, /url/],
    ['a url that is a number', { url: 42, events: ['quota.exceeded'] }, /url must be a string/],
  ];
  for (const [name, body, message] of invalid) {
    it(`refuses ${name} with 400 VALIDATION_ERROR`, async () => {
      const res = await create(acme.apiKey, body);
      assert.equal(res.status, 400);
      assert.ok(isErrorBody(res.body), JSON.stringify(res.body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, message);
    });
  }

  it('registers an endpoint off when asked (isActive: false), on by default', async () => {
    const off = await create(acme.apiKey, { url: 'https://a.example.com/off', events: ['quota.exceeded'], isActive: false });
    assert.equal(off.status, 201);
    assert.equal(off.body.isActive, false);
    const on = await create(acme.apiKey, { url: 'https://a.example.com/on', events: ['quota.exceeded'] });
    assert.equal(on.body.isActive, true);
    const list = await call(gw.url, acme.apiKey, 'GET', '/v1/webhooks');
    assert.equal(list.body.find((w: any) => w.id === off.body.id).isActive, false);
    const bad = await create(acme.apiKey, { url: 'https://a.example.com/bad', events: ['quota.exceeded'], isActive: 'no' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'VALIDATION_ERROR');
    for (const id of [off.body.id, on.body.id]) assert.equal((await call(gw.url, acme.apiKey, 'DELETE', `/v1/webhooks/${id}`)).status, 204);
  });

  it('refuses invalid updates with 400 and changes nothing', async () => {
    const { body: hook } = await create(acme.apiKey, { url: 'https://a.example.com/keep', events: ['quota.exceeded'] });
    for (const body of [{}, { secret: 'mine' }, { events: [] }, { events: ['nope'] }, { url: 'ftp://x.example.com' }, { isActive: 'yes' }, { events: ['quota.exceeded', 'quota.exceeded'] }]) {
      const res = await call(gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${hook.id}`, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      // An empty body (refused by the schema) and one of only unknown fields (refused by the
      // service) get the same message.
      if (Object.keys(body).length === 0 || 'secret' in body) assert.equal(res.body.message, 'body must have at least one of: url, events, isActive');
    }
    const list = await call(gw.url, acme.apiKey, 'GET', '/v1/webhooks');
    assert.deepEqual(
      list.body.find((w: any) => w.id === hook.id),
      { id: hook.id, url: 'https://a.example.com/keep', events: ['quota.exceeded'], isActive: true },
    );
  });

  it('answers 404 WEBHOOK_NOT_FOUND for another protocol’s endpoint on every route, and leaves it alone', async () => {
    const { body: hook } = await create(acme.apiKey, { url: 'https://a.example.com/private', events: ['quota.exceeded'] });
    const attempts: [string, string, unknown?][] = [
      ['PATCH', `/v1/webhooks/${hook.id}`, { isActive: false }],
      ['POST', `/v1/webhooks/${hook.id}/test`],
      ['GET', `/v1/webhooks/${hook.id}/deliveries`],
      ['POST', `/v1/webhooks/${hook.id}/deliveries/whd_01JAAAAAAAAAAAAAAAAAAAAAAA/retry`],
      ['DELETE', `/v1/webhooks/${hook.id}`],
    ];
    for (const [method, path, body] of attempts) {
      for (const key of [other.apiKey, other.sandboxApiKey]) {
        const res = await call(gw.url, key, method, path, body);
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.ok(isErrorBody(res.body));
        assert.equal(res.body.code, 'WEBHOOK_NOT_FOUND');
        assert.ok(!res.body.message.includes('private'));
      }
    }
    const list = await call(gw.url, acme.apiKey, 'GET', '/v1/webhooks');
    assert.deepEqual(list.body.find((w: any) => w.id === hook.id), { id: hook.id, url: hook.url, events: hook.events, isActive: true });
  });

  it('answers 404 WEBHOOK_NOT_FOUND for an unknown id on every route', async () => {
    for (const [method, path, body] of [
      ['PATCH', '/v1/webhooks/wh_nope', { isActive: false }],
      ['POST', '/v1/webhooks/wh_nope/test'],
      ['GET', '/v1/webhooks/wh_nope/deliveries'],
      ['POST', '/v1/webhooks/wh_nope/deliveries/whd_nope/retry'],
      ['DELETE', '/v1/webhooks/wh_nope'],
    ] as [string, string, unknown?][]) {
      const res = await call(gw.url, acme.apiKey, method, path, body);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.code, 'WEBHOOK_NOT_FOUND');
    }
  });

  it('answers 404 WEBHOOK_DELIVERY_NOT_FOUND for a delivery id that is not this endpoint’s', async () => {
    const { body: hook } = await create(acme.apiKey, { url: 'https://a.example.com/d', events: ['quota.exceeded'] });
    const res = await call(gw.url, acme.apiKey, 'POST', `/v1/webhooks/${hook.id}/deliveries/whd_01JAAAAAAAAAAAAAAAAAAAAAAA/retry`);
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'WEBHOOK_DELIVERY_NOT_FOUND');
  });

  it('needs an API key on every route', async () => {
    for (const [method, path] of [
      ['POST', '/v1/webhooks'],
      ['GET', '/v1/webhooks'],
      ['PATCH', '/v1/webhooks/wh_x'],
      ['DELETE', '/v1/webhooks/wh_x'],
      ['POST', '/v1/webhooks/wh_x/test'],
      ['GET', '/v1/webhooks/wh_x/deliveries'],
      ['POST', '/v1/webhooks/wh_x/deliveries/whd_x/retry'],
    ]) {
      const res = await call(gw.url, undefined, method, path);
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(res.body.code, 'INVALID_API_KEY');
    }
  });

  describe('per-tier cap', () => {
    it('allows 1 endpoint on Developer, then 403 WEBHOOK_LIMIT_REACHED; deleting frees the slot', async () => {
      const dev = await gw.createProtocol({ tier: 0 });
      // Developer keys may make 2 requests per second.
      let calls = 0;
      const paced = async (method: string, path: string, body?: unknown) => {
        if (calls++ % 2 === 0) await atNextSecond();
        return call(gw.url, dev.apiKey, method, path, body);
      };
      const first = await paced('POST', '/v1/webhooks', { url: 'https://a.example.com/1', events: ['quota.exceeded'] });
      assert.equal(first.status, 201);
      const second = await paced('POST', '/v1/webhooks', { url: 'https://a.example.com/2', events: ['quota.exceeded'] });
      assert.equal(second.status, 403);
      assert.ok(isErrorBody(second.body));
      assert.equal(second.body.code, 'WEBHOOK_LIMIT_REACHED');
      assert.match(second.body.message, /Developer tier allows 1 webhook endpoint;/);
      // An inactive endpoint still counts.
      await paced('PATCH', `/v1/webhooks/${first.body.id}`, { isActive: false });
      assert.equal((await paced('POST', '/v1/webhooks', { url: 'https://a.example.com/2', events: ['quota.exceeded'] })).status, 403);
      assert.equal((await paced('DELETE', `/v1/webhooks/${first.body.id}`)).status, 204);
      assert.equal((await paced('POST', '/v1/webhooks', { url: 'https://a.example.com/3', events: ['quota.exceeded'] })).status, 201);
    });

    it('holds under concurrent registrations: Growth gets exactly 5 of 8', async () => {
      const growth = await gw.createProtocol({ tier: 1 });
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => create(growth.apiKey, { url: `https://a.example.com/${i}`, events: ['quota.exceeded'] })),
      );
      assert.equal(results.filter((r) => r.status === 201).length, 5);
      assert.equal(results.filter((r) => r.status === 403 && r.body.code === 'WEBHOOK_LIMIT_REACHED').length, 3);
      assert.equal((await call(gw.url, growth.apiKey, 'GET', '/v1/webhooks')).body.length, 5);
    });

    it('allows 20 on Scale', async () => {
      const scale = await gw.createProtocol({ tier: 2 });
      for (let i = 0; i < 20; i++) {
        assert.equal((await create(scale.apiKey, { url: `https://a.example.com/${i}`, events: ['quota.exceeded'] })).status, 201);
      }
      const over = await create(scale.apiKey, { url: 'https://a.example.com/21', events: ['quota.exceeded'] });
      assert.equal(over.status, 403);
      assert.match(over.body.message, /Scale tier allows 20 webhook endpoints/);
    });
  });
});
