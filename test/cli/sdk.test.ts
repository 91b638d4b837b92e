import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Herald, HeraldAdmin, HeraldApiError, HeraldNetworkError, responseOf, type FetchLike } from '../../packages/sdk/src/client.js';
import { ADMIN_TOKEN, atNextSecond, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { closedPort } from './run-cli.js';

const sortedKeys = (value: object) => Object.keys(value).sort();

async function apiError(promise: Promise<unknown>): Promise<HeraldApiError> {
  const error = await promise.then(
    () => assert.fail('expected an error'),
    (e) => e,
  );
  assert.ok(error instanceof HeraldApiError, String(error));
  return error;
}

describe('SDK against a live gateway', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let herald: Herald;
  let admin: HeraldAdmin;

  before(async () => {
    gw = await startGateway({ env: { HERALD_AUTH_CACHE_MS: '0' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
    herald = new Herald({ apiKey: acme.apiKey, baseUrl: gw.url });
    admin = new HeraldAdmin({ adminToken: ADMIN_TOKEN, baseUrl: `${gw.url}/` });
  });
  after(() => gw.close());

  it('health.check needs no key and names each channel provider', async () => {
    const health = await new Herald({ baseUrl: gw.url }).health.check();
    assert.deepEqual(sortedKeys(health), ['channels', 'database', 'role', 'status', 'timestamp']);
    assert.equal(health.status, 'ok');
    assert.deepEqual(sortedKeys(health.channels), ['email', 'sms', 'telegram']);
  });

  it('health.check does not send the API key it does not need', async () => {
    const authorization: (string | undefined)[] = [];
    const recording: FetchLike = (url, init) => {
      authorization.push((init.headers as Record<string, string>).authorization);
      return fetch(url, init);
    };
    const health = await new Herald({ apiKey: acme.apiKey, baseUrl: gw.url, fetch: recording }).health.check();
    assert.equal(health.status, 'ok');
    assert.deepEqual(authorization, [undefined]);
  });

  it('account.getProtocol and getUsage return the contract fields exactly', async () => {
    const protocol = await herald.account.getProtocol();
    assert.deepEqual(sortedKeys(protocol), ['id', 'name', 'sends_this_period', 'subscription_expires_at', 'tier', 'tier_name']);
    assert.deepEqual([protocol.id, protocol.name, protocol.tier, protocol.tier_name], [acme.id, 'Acme', 3, 'Enterprise']);
    const usage = await herald.account.getUsage();
    assert.deepEqual(sortedKeys(usage), ['overageEnabled', 'remaining', 'resetsAt', 'tier', 'usage']);
    assert.equal(usage.remaining, 1_000_000);
  });

  it('responseOf gives the answer of a result: status, request id and the rate limit, as the gateway sent them', async () => {
    const usage = await herald.account.getUsage();
    const info = responseOf(usage)!;
    assert.equal(info.statusCode, 200);
    assert.match(info.requestId ?? '', /\S/);
    assert.equal(info.rateLimit?.limit, 500, 'the Enterprise tier: 500 requests a second');
    assert.ok(info.rateLimit!.remaining < 500);
    assert.ok(Math.abs(info.rateLimit!.reset - Date.now() / 1000) <= 2);
    const webhooks = await herald.webhooks.list();
    assert.equal(responseOf(webhooks)?.rateLimit?.limit, 500, 'a bare array answer too');
  });

  it('account.listRequests passes page, limit, statusCode and endpoint', async () => {
    await herald.account.getUsage();
    await new Herald({ apiKey: acme.apiKey, baseUrl: gw.url }).account.listRequests({ limit: 101 }).catch(() => {});
    const all = await herald.account.listRequests();
    assert.deepEqual(sortedKeys(all), ['items', 'page', 'total']);
    assert.deepEqual(sortedKeys(all.items[0]), ['endpoint', 'latencyMs', 'method', 'statusCode', 'timestamp']);
    const failed = await herald.account.listRequests({ statusCode: 400, endpoint: '/v1/requests', limit: 1, page: 1 });
    assert.equal(failed.items.length, 1);
    assert.equal(failed.items[0].statusCode, 400);
    const second = await herald.account.listRequests({ limit: 1, page: 2 });
    assert.equal(second.page, 2);
  });

  it('throws typed errors: 401, 400 (not retried), 404', async () => {
    const unauthorized = await apiError(new Herald({ apiKey: 'hrld_live_nope', baseUrl: gw.url }).account.getUsage());
    assert.deepEqual([unauthorized.statusCode, unauthorized.code, unauthorized.error], [401, 'INVALID_API_KEY', 'Unauthorized']);
    assert.ok(unauthorized.requestId);

    const statuses: number[] = [];
    const counting: FetchLike = async (url, init) => {
      const response = await fetch(url, init);
      statuses.push(response.status);
      return response;
    };
    const invalid = await apiError(new Herald({ apiKey: acme.apiKey, baseUrl: gw.url, fetch: counting }).account.listRequests({ limit: 101 }));
    assert.equal(invalid.code, 'VALIDATION_ERROR');
    assert.match(invalid.message, /limit/);
    assert.deepEqual(statuses, [400]);

    const missing = await apiError(admin.protocols.get('proto_missing'));
    assert.deepEqual([missing.statusCode, missing.code], [404, 'PROTOCOL_NOT_FOUND']);

    const wrongAdmin = await apiError(new HeraldAdmin({ adminToken: 'wrong-token-wrong-token', baseUrl: gw.url }).protocols.list());
    assert.equal(wrongAdmin.code, 'INVALID_ADMIN_TOKEN');
  });

  it('throws HeraldNetworkError for a closed port', async () => {
    const port = await closedPort();
    const error = await new Herald({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 }).health.check().catch((e) => e);
    assert.ok(error instanceof HeraldNetworkError);
    assert.equal(error.kind, 'connection_refused');
  });

  it('HeraldAdmin manages protocols and keys', async () => {
    const created = await admin.protocols.create({ name: 'Beta', tier: 0, overageEnabled: true });
    assert.deepEqual(sortedKeys(created), [
      'apiKey',
      'createdAt',
      'id',
      'name',
      'overageEnabled',
      'sandboxApiKey',
      'subscriptionExpiresAt',
      'tier',
      'tierName',
      'updatedAt',
    ]);
    const list = await admin.protocols.list({ limit: 100 });
    assert.deepEqual(sortedKeys(list), ['data', 'page', 'total']);
    assert.ok(list.data.some((p) => p.id === created.id));
    assert.equal((await admin.protocols.get(created.id)).name, 'Beta');
    const updated = await admin.protocols.update(created.id, { tier: 2, subscriptionExpiresAt: '2031-01-01T00:00:00.000Z' });
    assert.deepEqual([updated.tier, updated.tierName, updated.subscriptionExpiresAt], [2, 'Scale', '2031-01-01T00:00:00.000Z']);

    const key = await admin.keys.create(created.id, { environment: 'production' });
    assert.deepEqual(sortedKeys(key), ['apiKey', 'createdAt', 'environment', 'id', 'prefix', 'revokedAt']);
    assert.equal((await new Herald({ apiKey: key.apiKey, baseUrl: gw.url }).account.getProtocol()).id, created.id);
    const keys = await admin.keys.list(created.id);
    assert.equal(keys.data.length, 3);
    const revoked = await admin.keys.revoke(created.id, key.id);
    assert.ok(revoked.revokedAt);
    const refused = await apiError(new Herald({ apiKey: key.apiKey, baseUrl: gw.url }).account.getProtocol());
    assert.equal(refused.statusCode, 401);
  });

  it('waits out a real 429 by its Retry-After and then succeeds', async () => {
    const small = await gw.createProtocol({ tier: 0 });
    for (let attempt = 0; attempt < 3; attempt++) {
      const statuses: number[] = [];
      const client = new Herald({
        apiKey: small.apiKey,
        baseUrl: gw.url,
        fetch: async (url, init) => {
          const response = await fetch(url, init);
          statuses.push(response.status);
          return response;
        },
      });
      await atNextSecond();
      await Promise.all([1, 2].map(() => client.account.getUsage({ maxRetries: 0 })));
      statuses.length = 0;
      const started = Date.now();
      const usage = await client.account.getUsage();
      if (statuses[0] !== 429) continue; // the second ended before the call: try the scenario again
      assert.equal(usage.tier, 0);
      assert.equal(statuses.at(-1), 200);
      assert.ok(Date.now() - started >= 900, 'waited about the one second Retry-After asked for');
      return;
    }
    assert.fail('never hit the rate limit');
  });
});
