import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Authenticator } from '../../packages/server/src/auth/authenticator.js';
import { loadConfig } from '../../packages/server/src/config.js';
import type { Queryable } from '../../packages/server/src/db/connection.js';
import { startHerald, type Herald } from '../../packages/server/src/runtime.js';
import { ADMIN_TOKEN, atNextSecond, call, onPostgres, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';

/** The gateway's own database, counting the key lookups made through it, and those answered. */
function countingKeyLookups(db: Queryable) {
  let lookups = 0;
  let answered = 0;
  const counted: Queryable = {
    async query(text, params) {
      if (!text.includes('FROM api_keys')) return db.query(text, params);
      lookups++;
      try {
        return await db.query(text, params);
      } finally {
        answered++;
      }
    },
  };
  return { db: counted, lookups: () => lookups, answered: () => answered };
}

describe('API key cache', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  const header = () => `Bearer ${acme.apiKey}`;

  before(async () => {
    gw = await startGateway();
    acme = await gw.createProtocol({ tier: 1 });
  });
  after(() => gw.close());

  it('looks a key up once however many requests wait for it', async () => {
    const { db, lookups } = countingKeyLookups(gw.herald.deps.db);
    const auth = new Authenticator(db, 5000);
    const owners = await Promise.all(Array.from({ length: 50 }, () => auth.authenticate(header())));
    assert.equal(lookups(), 1);
    for (const owner of owners) assert.equal(owner?.protocol.id, acme.id);
    assert.equal(auth.peek(header())?.protocol.id, acme.id);
    assert.equal(lookups(), 1);
  });

  it('refreshes a key in use before it expires, in the background and once', async () => {
    const { db, lookups, answered } = countingKeyLookups(gw.herald.deps.db);
    let now = 1_000_000;
    const auth = new Authenticator(db, 1000, () => now);
    await auth.authenticate(header());
    now += 700;
    assert.equal(auth.peek(header())?.protocol.id, acme.id);
    assert.equal(lookups(), 1, 'a young entry is answered as it is');
    now += 200; // 90% of its life
    assert.equal(auth.peek(header())?.protocol.id, acme.id, 'the entry still answers while it is looked up again');
    assert.equal(auth.peek(header())?.protocol.id, acme.id);
    assert.equal(lookups(), 2, 'one refresh, not one per request');
    await auth.authenticate(header());
    await waitFor(async () => answered() === 2); // the refresh has its answer
    await new Promise((resolve) => setImmediate(resolve));
    now += 500; // past the first entry's expiry, early in the refreshed one's life
    assert.equal(auth.peek(header())?.protocol.id, acme.id);
    assert.equal(lookups(), 2);
  });

  it('stops answering for a revoked key once its entry expires, never later', async () => {
    const other = await gw.createProtocol({ tier: 1 });
    const otherHeader = `Bearer ${other.apiKey}`;
    let now = 2_000_000;
    const auth = new Authenticator(gw.herald.deps.db, 1000, () => now);
    assert.equal((await auth.authenticate(otherHeader))?.protocol.id, other.id);
    const keys = await call(gw.url, ADMIN_TOKEN, 'GET', `/v1/admin/protocols/${other.id}/keys`);
    const live = keys.body.data.find((k: { environment: string }) => k.environment === 'production');
    assert.equal((await call(gw.url, ADMIN_TOKEN, 'DELETE', `/v1/admin/protocols/${other.id}/keys/${live.id}`)).status, 200);
    now += 999;
    assert.equal(auth.peek(otherHeader)?.protocol.id, other.id, 'cached: revocation reaches this process within the TTL');
    now += 1;
    assert.equal(auth.peek(otherHeader), undefined);
    assert.equal(await auth.authenticate(otherHeader), null);
  });

  it('caches nothing a lookup read before invalidate()', async () => {
    const { db, lookups } = countingKeyLookups(gw.herald.deps.db);
    const auth = new Authenticator(db, 5000);
    const pending = auth.authenticate(header());
    auth.invalidate();
    assert.equal((await pending)?.protocol.id, acme.id);
    assert.equal(auth.peek(header()), undefined);
    await auth.authenticate(header());
    assert.equal(lookups(), 2);
  });

  it('caches unknown keys as refusals', async () => {
    const { db, lookups } = countingKeyLookups(gw.herald.deps.db);
    const auth = new Authenticator(db, 5000);
    const unknown = 'Bearer hrld_live_0123456789012345678901234567890123456789';
    assert.equal(await auth.authenticate(unknown), null);
    assert.equal(auth.peek(unknown), null);
    assert.equal(lookups(), 1);
  });
});

describe('API key cache across processes (PostgreSQL)', { skip: !onPostgres && 'PostgreSQL only: PGlite serves one process' }, () => {
  // Entries that would live a minute: whatever changes sooner came through the announcement.
  const LONG_CACHE = { HERALD_AUTH_CACHE_MS: '60000' };
  let gw: TestGateway;
  let other: Herald;

  before(async () => {
    gw = await startGateway({ env: LONG_CACHE });
    other = await startHerald(loadConfig({ ...gw.env, HERALD_ROLE: 'api' }), { announce: () => {} });
  });
  after(async () => {
    await other?.close();
    await gw.close();
  });

  // The tier's limit, on every answer (a 429 too) to a valid key.
  const limitSeenBy = async (url: string, key: string) => (await call(url, key, 'GET', '/v1/usage')).headers.get('x-ratelimit-limit');

  it("applies another process's tier change and key revocation at once, not when cached entries expire", async () => {
    const p = await gw.createProtocol({ tier: 1 });
    assert.equal(await limitSeenBy(other.url!, p.apiKey), '20');
    const patched = await call(gw.url, ADMIN_TOKEN, 'PATCH', `/v1/admin/protocols/${p.id}`, { tier: 0 });
    assert.equal(patched.status, 200);
    assert.equal(await waitFor(async () => ((await limitSeenBy(other.url!, p.apiKey)) === '2' ? '2' : undefined)), '2');

    const keys = await call(gw.url, ADMIN_TOKEN, 'GET', `/v1/admin/protocols/${p.id}/keys`);
    const live = keys.body.data.find((k: { environment: string }) => k.environment === 'production');
    assert.equal((await call(gw.url, ADMIN_TOKEN, 'DELETE', `/v1/admin/protocols/${p.id}/keys/${live.id}`)).status, 200);
    await waitFor(async () => (await call(other.url!, p.apiKey, 'GET', '/v1/usage')).status === 401);
    await atNextSecond(); // a fresh window of the protocol's 2 requests a second
    assert.equal((await call(other.url!, p.sandboxApiKey, 'GET', '/v1/usage')).status, 200);
  });
});
