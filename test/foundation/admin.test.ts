import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, call, isErrorBody, startGateway, type TestGateway } from '../support/gateway.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('admin API', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway({ env: { HERALD_AUTH_CACHE_MS: '0', HERALD_IP_RATE_LIMIT: '1000' } });
  });
  after(() => gw.close());

  const admin = (method: string, path: string, body?: unknown) => call(gw.url, ADMIN_TOKEN, method, path, body);

  it('refuses a missing or wrong admin token with 401 INVALID_ADMIN_TOKEN on every route', async () => {
    const p = await gw.createProtocol({ tier: 1 });
    const routes: [string, string, unknown?][] = [
      ['POST', '/v1/admin/protocols', { name: 'x', tier: 1 }],
      ['GET', '/v1/admin/protocols'],
      ['GET', `/v1/admin/protocols/${p.id}`],
      ['PATCH', `/v1/admin/protocols/${p.id}`, { tier: 3 }],
      ['GET', `/v1/admin/protocols/${p.id}/keys`],
      ['POST', `/v1/admin/protocols/${p.id}/keys`, { environment: 'production' }],
      ['DELETE', `/v1/admin/protocols/${p.id}/keys/key_x`],
    ];
    const tokens = [undefined, 'wrong-token-0123456789', ADMIN_TOKEN + 'x', ADMIN_TOKEN.slice(0, -1), p.apiKey];
    for (const [method, path, body] of routes) {
      for (const token of tokens) {
        const res = await call(gw.url, token, method, path, body);
        assert.equal(res.status, 401, `${method} ${path} with ${token}`);
        assert.ok(isErrorBody(res.body), JSON.stringify(res.body));
        assert.equal(res.body.code, 'INVALID_ADMIN_TOKEN');
        assert.equal(res.body.error, 'Unauthorized');
        assert.equal(res.headers.get('www-authenticate'), token === undefined ? 'Bearer realm="herald-admin"' : 'Bearer realm="herald-admin", error="invalid_token"');
      }
    }
    // Nothing was changed by the refused calls.
    const after = await admin('GET', `/v1/admin/protocols/${p.id}`);
    assert.equal(after.body.tier, 1);
    assert.equal((await admin('GET', `/v1/admin/protocols/${p.id}/keys`)).body.data.length, 2);
  });

  it('counts the operator’s calls against the admin limit, and calls without the token per client IP', async () => {
    const tight = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '3', HERALD_ADMIN_RATE_LIMIT: '500' } });
    try {
      const operator = await Promise.all(Array.from({ length: 10 }, () => call(tight.url, ADMIN_TOKEN, 'GET', '/v1/admin/protocols')));
      assert.deepEqual(operator.map((res) => res.status), Array(10).fill(200));
      assert.ok(operator.every((res) => res.headers.get('x-ratelimit-limit') === '500'));
      // Ten wrong guesses at once: at most two windows' worth (3 each) get an answer other than 429.
      const guesses = await Promise.all(Array.from({ length: 10 }, () => call(tight.url, 'wrong-token-0123456789', 'GET', '/v1/admin/protocols')));
      const statuses = guesses.map((res) => res.status);
      assert.ok(statuses.filter((status) => status === 401).length <= 6, statuses.join());
      assert.ok(statuses.includes(429), statuses.join());
      assert.ok(guesses.every((res) => res.headers.get('x-ratelimit-limit') === '3'));
      // Over that limit, the right token gets the same 429 as a wrong one: a 429 tells a guesser
      // nothing. (Tried again when the guesses and the right token fell in different seconds.)
      let checked = false;
      for (let attempt = 0; attempt < 5 && !checked; attempt++) {
        const burst = await Promise.all(Array.from({ length: 6 }, () => call(tight.url, 'wrong-token-0123456789', 'GET', '/v1/admin/protocols')));
        const right = await call(tight.url, ADMIN_TOKEN, 'GET', '/v1/admin/protocols');
        const window = burst.at(-1)!.headers.get('x-ratelimit-reset');
        if (right.headers.get('x-ratelimit-reset') !== window) continue;
        checked = true;
        assert.equal(right.status, 429, JSON.stringify(right.body));
        assert.equal(right.headers.get('x-ratelimit-limit'), '3');
      }
      assert.ok(checked, 'a guess burst and the right token fell in the same second');
    } finally {
      await tight.close();
    }
  });

  it('validates a new protocol: name required, tier an integer from 0 to 3', async () => {
    const cases: [unknown, RegExp][] = [
      [{ tier: 1 }, /^name is required$/],
      [{ name: '', tier: 1 }, /^name\b/],
      [{ name: 'x' }, /^tier is required$/],
      [{ name: 'x', tier: -1 }, /^tier must be at least 0$/],
      [{ name: 'x', tier: 4 }, /^tier must be at most 3$/],
      [{ name: 'x', tier: 1.5 }, /^tier must be an integer$/],
      [{ name: 'x', tier: '2' }, /^tier must be an integer$/],
      [{ name: 'x', tier: null }, /^tier must be an integer$/],
      [{ name: 42, tier: 1 }, /^name must be a string$/],
      [{ name: '   ', tier: 1 }, /^name must be a name that is not blank and holds no control or direction characters/],
      [{ name: 'Acme\r\nBcc: x@example.com', tier: 1 }, /^name must be a name that is not blank and holds no control or direction characters/],
      [{ name: 'Acme\u0085', tier: 1 }, /^name must be a name that is not blank/],
      [{ name: 'Acme\u202e', tier: 1 }, /^name must be a name that is not blank and holds no control or direction characters/],
      [{ name: '\u200b\u200d \ufeff', tier: 1 }, /^name must be a name that is not blank/],
      [{ name: '\u00ad\u2800\u3164', tier: 1 }, /^name must be a name that is not blank/],
      [{ name: 'x', tier: 1, subscriptionExpiresAt: 'next year' }, /^subscriptionExpiresAt must be a valid date-time$/],
      // The database has no year 0 and would keep years 1 to 99 in another century.
      [{ name: 'x', tier: 1, subscriptionExpiresAt: '0000-06-01T00:00:00Z' }, /^subscriptionExpiresAt must be an instant in the years 1970 to 9999, got "0000-06-01T00:00:00Z"$/],
      [{ name: 'x', tier: 1, subscriptionExpiresAt: '0049-03-01T10:00:00Z' }, /^subscriptionExpiresAt must be an instant in the years 1970 to 9999/],
      [{ name: 'x', tier: 1, subscriptionExpiresAt: '1969-12-31T23:59:59Z' }, /^subscriptionExpiresAt must be an instant in the years 1970 to 9999/],
    ];
    const before = (await admin('GET', '/v1/admin/protocols')).body.total;
    for (const [body, message] of cases) {
      const res = await admin('POST', '/v1/admin/protocols', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, message, JSON.stringify(body));
    }
    assert.equal((await admin('GET', '/v1/admin/protocols')).body.total, before);
  });

  it('sets a new protocol to expire one calendar year after its creation', async () => {
    // On a 29 February the year ends on 28 February; the instant is the creation's.
    const leap = await startGateway({ env: { HERALD_ROLE: 'api' }, now: () => new Date('2028-02-29T08:00:00.000Z') });
    try {
      const res = await call(leap.url, ADMIN_TOKEN, 'POST', '/v1/admin/protocols', { name: 'Leap', tier: 0 });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.subscriptionExpiresAt, '2029-02-28T08:00:00.000Z');
    } finally {
      await leap.close();
    }
  });

  it('creates a protocol with a live and a sandbox key, shown once', async () => {
    const res = await admin('POST', '/v1/admin/protocols', { name: 'Jupiter', tier: 2, overageEnabled: true, subscriptionExpiresAt: '2030-01-01T00:00:00Z' });
    assert.equal(res.status, 201);
    assert.match(res.body.id, /^proto_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(res.body.name, 'Jupiter');
    assert.equal(res.body.tier, 2);
    assert.equal(res.body.tierName, 'Scale');
    assert.equal(res.body.overageEnabled, true);
    assert.equal(res.body.subscriptionExpiresAt, '2030-01-01T00:00:00.000Z');
    assert.match(res.body.createdAt, ISO);
    assert.match(res.body.apiKey, /^hrld_live_[A-Za-z0-9]{40}$/);
    assert.match(res.body.sandboxApiKey, /^hrld_test_[A-Za-z0-9]{40}$/);
    assert.equal(res.headers.get('cache-control'), 'no-store', 'an answer holding keys is not cached');

    const got = await admin('GET', `/v1/admin/protocols/${res.body.id}`);
    assert.equal(got.status, 200);
    const { apiKey, sandboxApiKey, ...view } = res.body;
    assert.deepEqual(got.body, view);
    assert.ok(!JSON.stringify(got.body).includes(apiKey.slice(10)));

    const keys = await admin('GET', `/v1/admin/protocols/${res.body.id}/keys`);
    assert.equal(keys.status, 200);
    assert.deepEqual(keys.body.data.map((k: any) => k.environment).sort(), ['production', 'sandbox']);
    for (const key of keys.body.data) {
      assert.deepEqual(Object.keys(key).sort(), ['createdAt', 'environment', 'id', 'prefix', 'revokedAt']);
      assert.equal(key.prefix, (key.environment === 'production' ? apiKey : sandboxApiKey).slice(0, 14));
      assert.equal(key.revokedAt, null);
    }
    assert.ok(!JSON.stringify(keys.body).includes(apiKey.slice(14)));
    assert.ok(!JSON.stringify(keys.body).includes(sandboxApiKey.slice(14)));
  });

  it('lists protocols newest first, with paging', async () => {
    const a = await gw.createProtocol({ name: 'list-a' });
    const b = await gw.createProtocol({ name: 'list-b' });
    const list = await admin('GET', '/v1/admin/protocols?limit=2');
    assert.equal(list.status, 200);
    assert.equal(list.body.page, 1);
    assert.ok(list.body.total >= 2);
    assert.deepEqual(
      list.body.data.map((p: any) => p.id),
      [b.id, a.id],
    );
    const page2 = await admin('GET', '/v1/admin/protocols?limit=1&page=2');
    assert.deepEqual(
      page2.body.data.map((p: any) => p.id),
      [a.id],
    );
    assert.equal((await admin('GET', '/v1/admin/protocols?limit=101')).status, 400);
  });

  it('answers 404 PROTOCOL_NOT_FOUND for an unknown protocol', async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/admin/protocols/proto_nope'],
      ['PATCH', '/v1/admin/protocols/proto_nope', { tier: 1 }],
      ['GET', '/v1/admin/protocols/proto_nope/keys'],
      ['POST', '/v1/admin/protocols/proto_nope/keys', { environment: 'sandbox' }],
    ] as [string, string, unknown?][]) {
      const res = await admin(method, path, body);
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'PROTOCOL_NOT_FOUND');
    }
  });

  it('changes the tier, and the protocol\'s key gets the new rate limit at once', async () => {
    const p = await gw.createProtocol({ tier: 0 });
    const before = await call(gw.url, p.apiKey, 'GET', '/v1/protocols/me');
    assert.equal(before.headers.get('x-ratelimit-limit'), '2');
    const patched = await admin('PATCH', `/v1/admin/protocols/${p.id}`, { tier: 2, name: 'Renamed' });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.tier, 2);
    assert.equal(patched.body.tierName, 'Scale');
    assert.equal(patched.body.name, 'Renamed');
    assert.equal(patched.body.overageEnabled, false, 'fields not sent are kept');
    const after = await call(gw.url, p.apiKey, 'GET', '/v1/protocols/me');
    assert.equal(after.status, 200);
    assert.equal(after.headers.get('x-ratelimit-limit'), '100');
    assert.equal(after.body.tier, 2);
    assert.equal(after.body.tier_name, 'Scale');
    assert.equal(after.body.name, 'Renamed');

    for (const body of [{}, { tier: 5 }, { tier: 'x' }, { name: '' }, { name: 'a\nb' }, { bogus: 1 }, { apiKey: 'hrld_live_x' }, { subscriptionExpiresAt: '0001-01-01T00:00:00Z' }]) {
      const res = await admin('PATCH', `/v1/admin/protocols/${p.id}`, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
    }
    for (const body of [{}, { bogus: 1 }]) {
      const res = await admin('PATCH', `/v1/admin/protocols/${p.id}`, body);
      assert.equal(res.body.message, 'body must have at least one of: name, tier, overageEnabled, subscriptionExpiresAt');
    }
    assert.equal((await admin('GET', `/v1/admin/protocols/${p.id}`)).body.updatedAt, patched.body.updatedAt, 'a refused change changes nothing');
  });

  it('issues extra keys (shown once) and revokes them', async () => {
    const p = await gw.createProtocol({ tier: 3 });
    const live = await admin('POST', `/v1/admin/protocols/${p.id}/keys`, { environment: 'production' });
    const test = await admin('POST', `/v1/admin/protocols/${p.id}/keys`, { environment: 'sandbox' });
    assert.equal(live.status, 201);
    assert.equal(test.status, 201);
    assert.match(live.body.apiKey, /^hrld_live_[A-Za-z0-9]{40}$/);
    assert.match(test.body.apiKey, /^hrld_test_[A-Za-z0-9]{40}$/);
    assert.equal(live.body.prefix, live.body.apiKey.slice(0, 14));
    assert.match(live.body.id, /^key_/);
    assert.equal(live.body.environment, 'production');
    assert.equal(test.body.environment, 'sandbox');
    assert.equal((await call(gw.url, live.body.apiKey, 'GET', '/v1/protocols/me')).body.id, p.id);
    assert.equal((await call(gw.url, test.body.apiKey, 'GET', '/v1/protocols/me')).body.id, p.id);

    const keys = await admin('GET', `/v1/admin/protocols/${p.id}/keys`);
    assert.equal(keys.body.data.length, 4);
    assert.ok(!JSON.stringify(keys.body).includes(live.body.apiKey));

    for (const body of [{}, { environment: 'staging' }, { environment: 'live' }]) {
      const res = await admin('POST', `/v1/admin/protocols/${p.id}/keys`, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
    }

    const revoked = await admin('DELETE', `/v1/admin/protocols/${p.id}/keys/${live.body.id}`);
    assert.equal(revoked.status, 200);
    assert.match(revoked.body.revokedAt, ISO);
    const refused = await call(gw.url, live.body.apiKey, 'GET', '/v1/protocols/me');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'INVALID_API_KEY');
    assert.equal((await call(gw.url, p.apiKey, 'GET', '/v1/protocols/me')).status, 200, 'other keys keep working');
    // Revoking twice keeps the first revocation time.
    const again = await admin('DELETE', `/v1/admin/protocols/${p.id}/keys/${live.body.id}`);
    assert.equal(again.status, 200);
    assert.equal(again.body.revokedAt, revoked.body.revokedAt);
  });

  it("will not revoke a key through another protocol's id", async () => {
    const owner = await gw.createProtocol({ tier: 3 });
    const intruder = await gw.createProtocol({ tier: 3 });
    const [key] = (await admin('GET', `/v1/admin/protocols/${owner.id}/keys`)).body.data;
    const res = await admin('DELETE', `/v1/admin/protocols/${intruder.id}/keys/${key.id}`);
    assert.equal(res.status, 404);
    assert.ok(isErrorBody(res.body));
    assert.equal(res.body.code, 'API_KEY_NOT_FOUND');
    const unknown = await admin('DELETE', `/v1/admin/protocols/${owner.id}/keys/key_nope`);
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'API_KEY_NOT_FOUND']);
    const nobody = await admin('DELETE', `/v1/admin/protocols/proto_nope/keys/${key.id}`);
    assert.deepEqual([nobody.status, nobody.body.code], [404, 'PROTOCOL_NOT_FOUND'], 'an unknown protocol is named as such, as on the other admin routes');
    assert.equal((await call(gw.url, owner.apiKey, 'GET', '/v1/usage')).status, 200);
  });
});
