import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';

describe('API keys', () => {
  let gw: TestGateway;
  let acme: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_AUTH_CACHE_MS: '0' } });
    acme = await gw.createProtocol({ tier: 3 });
  });
  after(() => gw.close());

  const cases: [string, Record<string, string>][] = [
    ['missing header', {}],
    ['not a bearer', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['malformed key', { authorization: 'Bearer hrld_live_short' }],
    ['wrong prefix', { authorization: 'Bearer sk_live_0123456789012345678901234567890123456789' }],
    ['unknown key', { authorization: 'Bearer hrld_live_0123456789012345678901234567890123456789' }],
    ['empty bearer', { authorization: 'Bearer ' }],
  ];
  for (const [name, headers] of cases) {
    it(`refuses a ${name} with 401 INVALID_API_KEY and rate-limit headers`, async () => {
      const res = await call(gw.url, undefined, 'GET', '/v1/protocols/me', undefined, headers);
      assert.equal(res.status, 401);
      assert.ok(isErrorBody(res.body), JSON.stringify(res.body));
      assert.equal(res.body.code, 'INVALID_API_KEY');
      // RFC 9110: a 401 says how to authenticate; RFC 6750: a bearer token sent is named invalid.
      const sentToken = /^Bearer \S/.test(headers.authorization ?? '');
      assert.equal(res.headers.get('www-authenticate'), sentToken ? 'Bearer realm="herald", error="invalid_token"' : 'Bearer realm="herald"');
      assert.equal(res.body.error, 'Unauthorized');
      assert.ok(res.headers.get('x-ratelimit-limit'));
      assert.ok(res.headers.get('x-ratelimit-reset'));
    });
  }

  it('accepts live and sandbox keys of the protocol', async () => {
    for (const key of [acme.apiKey, acme.sandboxApiKey]) {
      assert.match(key, /^hrld_(live|test)_[A-Za-z0-9]{40}$/);
      const res = await call(gw.url, key, 'GET', '/v1/protocols/me');
      assert.equal(res.status, 200);
      assert.equal(res.body.id, acme.id);
    }
    assert.match(acme.apiKey, /^hrld_live_/);
    assert.match(acme.sandboxApiKey, /^hrld_test_/);
  });

  it('stores keys only as hashes', async () => {
    const rows = await gw.herald.deps.db.query<{ key_hash: string; key_prefix: string }>('SELECT key_hash, key_prefix FROM api_keys');
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(acme.apiKey));
    assert.ok(!dump.includes(acme.apiKey.slice(10)));
    for (const row of rows) assert.match(row.key_hash, /^[0-9a-f]{64}$/);
  });

  it('refuses a revoked key', async () => {
    const other = await gw.createProtocol({ tier: 3 });
    const keys = await call(gw.url, ADMIN_TOKEN, 'GET', `/v1/admin/protocols/${other.id}/keys`);
    const live = keys.body.data.find((k: any) => k.environment === 'production');
    assert.equal((await call(gw.url, other.apiKey, 'GET', '/v1/usage')).status, 200);
    const revoked = await call(gw.url, ADMIN_TOKEN, 'DELETE', `/v1/admin/protocols/${other.id}/keys/${live.id}`);
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revokedAt);
    const res = await call(gw.url, other.apiKey, 'GET', '/v1/usage');
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'INVALID_API_KEY');
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="herald", error="invalid_token"');
    // the sandbox key of the same protocol still works
    assert.equal((await call(gw.url, other.sandboxApiKey, 'GET', '/v1/usage')).status, 200);
  });

  it('lets /health through without a key', async () => {
    const res = await call(gw.url, undefined, 'GET', '/health');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
    assert.ok(!Number.isNaN(Date.parse(res.body.timestamp)));
    assert.ok(res.headers.get('x-ratelimit-limit'));
  });
});
