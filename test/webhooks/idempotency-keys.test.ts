import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { atNextSecond, call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';

/** The Idempotency-Key header of POST /v1/webhooks. */
describe('Idempotency-Key on registering a webhook endpoint', () => {
  let gw: TestGateway;
  let acme: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true', HERALD_IP_RATE_LIMIT: '10000' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
  });
  after(() => gw.close());

  const endpointsOf = async (protocol: TestProtocol) =>
    (await gw.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE protocol_id = $1', [protocol.id]))[0].n;
  const register = (body: unknown, key?: string, apiKey = acme.apiKey) =>
    call(gw.url, apiKey, 'POST', '/v1/webhooks', body, key === undefined ? {} : { 'idempotency-key': key });
  const endpoint = { url: 'https://hooks.example.com/herald', events: ['notification.delivered'] };

  it('registers once for a repeated key and body; the repeat gets the first answer, secret included, marked replayed', async () => {
    const key = `wh-${randomUUID()}`;
    const before = await endpointsOf(acme);
    const first = await register(endpoint, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.match(first.body.secret, /^whsec_/);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await register({ events: endpoint.events, url: endpoint.url, note: 'ignored' }, key);
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.headers.get('cache-control'), 'no-store');
    assert.deepEqual(again.body, first.body, 'the same endpoint and the same secret');
    assert.equal(await endpointsOf(acme), before + 1);

    // The answer kept with the key holds the secret sealed, never in clear.
    const [kept] = await gw.herald.deps.db.query<{ response: unknown }>('SELECT response FROM creation_keys WHERE protocol_id = $1 AND idempotency_key = $2', [acme.id, key]);
    assert.ok(kept, 'the key was kept');
    assert.ok(!JSON.stringify(kept.response).includes(first.body.secret));

    const other = await register({ ...endpoint, url: 'https://hooks.example.com/other' }, key);
    assert.equal(other.status, 409, JSON.stringify(other.body));
    assert.ok(isErrorBody(other.body));
    assert.equal(other.body.code, 'DUPLICATE_IDEMPOTENCY_KEY');
    assert.equal(await endpointsOf(acme), before + 1);
  });

  it('registers exactly one endpoint for 10 concurrent requests with one key, all with the same secret', async () => {
    const protocol = await gw.createProtocol({ tier: 3 });
    const key = `wh-${randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 10 }, () => register(endpoint, key, protocol.apiKey)));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(10).fill(201),
    );
    assert.equal(new Set(answers.map((a) => `${a.body.id} ${a.body.secret}`)).size, 1);
    assert.equal(await endpointsOf(protocol), 1);
  });

  it('keeps no key for a refused registration, refuses a key in the body, and a sandbox key still gets 403', async () => {
    // The Developer tier: one endpoint, two requests a second.
    const protocol = await gw.createProtocol({ tier: 0 });
    const key = `wh-${randomUUID()}`;
    await atNextSecond();
    const { id } = (await register(endpoint, undefined, protocol.apiKey)).body;
    const capped = await register({ ...endpoint, url: 'https://hooks.example.com/second' }, key, protocol.apiKey);
    assert.equal(capped.status, 403, JSON.stringify(capped.body));
    assert.equal(capped.body.code, 'WEBHOOK_LIMIT_REACHED');
    // With room again, the same key registers: the refused request left it unused.
    await atNextSecond();
    assert.equal((await call(gw.url, protocol.apiKey, 'DELETE', `/v1/webhooks/${id}`)).status, 204);
    assert.equal((await register({ ...endpoint, url: 'https://hooks.example.com/second' }, key, protocol.apiKey)).status, 201);

    const inBody = await register({ ...endpoint, idempotencyKey: 'k' });
    assert.equal(inBody.status, 400);
    assert.match(inBody.body.message, /Idempotency-Key header/);
    assert.equal((await register(endpoint, `wh-${randomUUID()}`, acme.sandboxApiKey)).status, 403);
  });

  it('rotates once for a repeated key: the repeat answers the first new secret, and the secret before it keeps its grace period', async () => {
    const created = (await register({ ...endpoint, url: 'https://hooks.example.com/rotating' })).body;
    const key = `rotate-${randomUUID()}`;
    const rotate = (body: unknown) => call(gw.url, acme.apiKey, 'POST', `/v1/webhooks/${created.id}/rotate-secret`, body, { 'idempotency-key': key });
    const first = await rotate(undefined);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.notEqual(first.body.secret, created.secret);
    const again = await rotate(undefined);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, first.body);
    // Deliveries are signed with the new secret and, for the grace period, the one before it.
    const endpointRow = (await gw.herald.deps.db.query<{ secret_enc: string; previous_secret_enc: string }>('SELECT secret_enc, previous_secret_enc FROM webhook_endpoints WHERE id = $1', [created.id]))[0];
    assert.equal(gw.herald.deps.secrets.decrypt(endpointRow.secret_enc), first.body.secret);
    assert.equal(gw.herald.deps.secrets.decrypt(endpointRow.previous_secret_enc), created.secret);
    assert.equal((await rotate({ previousSecretExpiresInSeconds: 60 })).status, 409, 'the same key with another body');

    // The secret is given again only while it is the endpoint's, and for 24 hours.
    const createKey = `wh-${randomUUID()}`;
    const hook = { ...endpoint, url: 'https://hooks.example.com/replayed' };
    const registered = (await register(hook, createKey)).body;
    await gw.herald.deps.db.query("UPDATE creation_keys SET created_at = created_at - interval '23 hours' WHERE idempotency_key = $1", [createKey]);
    assert.equal((await register(hook, createKey)).body.secret, registered.secret, 'within a day');
    await gw.herald.deps.db.query("UPDATE creation_keys SET created_at = created_at - interval '2 hours' WHERE idempotency_key = $1", [createKey]);
    const late = await register(hook, createKey);
    assert.equal(late.status, 409, JSON.stringify(late.body));
    assert.match(late.body.message, /more than 24 hours ago: its answer, which holds a signing secret, is not given again; use a new key/);
    assert.ok(!JSON.stringify(late.body).includes(registered.secret));

    const rotatedKey = `wh-${randomUUID()}`;
    const fresh = (await register({ ...endpoint, url: 'https://hooks.example.com/fresh' }, rotatedKey)).body;
    assert.equal((await call(gw.url, acme.apiKey, 'POST', `/v1/webhooks/${fresh.id}/rotate-secret`, {})).status, 200);
    const stale = await register({ ...endpoint, url: 'https://hooks.example.com/fresh' }, rotatedKey);
    assert.equal(stale.status, 409);
    assert.match(stale.body.message, /another secret since/);
    assert.equal((await call(gw.url, acme.apiKey, 'DELETE', `/v1/webhooks/${registered.id}`)).status, 204);
    assert.equal((await rotate(undefined)).status, 200, 'the rotation is still its endpoint’s secret');
    const inBody = await call(gw.url, acme.apiKey, 'POST', `/v1/webhooks/${created.id}/rotate-secret`, { idempotencyKey: 'k' });
    assert.equal(inBody.status, 400);
  });
});
