import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadContacts, reachableChannels } from '../../packages/server/src/identities/identity-store.js';
import { ADMIN_TOKEN, atNextSecond, call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { lastCode, newWallet, register, verify } from './wallet-key.js';

describe('wallet status, privacy and admin import', () => {
  let gw: TestGateway;
  let acme: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '100000' } });
    acme = await gw.createProtocol({ tier: 3 });
  });
  after(() => gw.close());

  const importIdentity = (body: unknown, token = ADMIN_TOKEN) => call(gw.url, token, 'POST', '/v1/admin/identities', body);
  const status = (wallet: string, key = acme.apiKey) => call(gw.url, key, 'GET', `/v1/wallets/${wallet}/status`);

  it('answers wallet status with a key only, and 400 for an invalid wallet', async () => {
    const wallet = newWallet().address;
    const noKey = await status(wallet, '');
    assert.equal(noKey.status, 401);
    assert.equal(noKey.body.code, 'INVALID_API_KEY');
    for (const bad of ['abc', '0'.repeat(44), 'O'.repeat(43)]) {
      const res = await status(bad);
      assert.equal(res.status, 400, bad);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, /wallet/);
    }
    assert.deepEqual((await status(wallet, acme.sandboxApiKey)).body, { registered: false, channels: [] });
  });

  it('never shows contact values to protocols, and keeps none in clear at rest', async () => {
    const wallet = newWallet();
    const email = 'secret.person@example.org';
    const phone = '+4915112345678';
    const chat = '5550001112';
    await register(gw, wallet, { email, phone });
    const registration = JSON.stringify(await register(gw, wallet, { email, phone }));
    const code = await lastCode(gw, wallet.address, 'email');
    await verify(gw, wallet.address, 'email', code);
    await importIdentity({ wallet: wallet.address, telegramChatId: chat });

    const res = await status(wallet.address);
    assert.deepEqual(res.body, { registered: true, channels: ['email', 'telegram'] });
    for (const text of [JSON.stringify(res.body), registration]) {
      for (const secret of [email, phone, chat, 'secret.person']) assert.ok(!text.includes(secret), `${secret} leaked`);
    }

    const [row] = await gw.herald.deps.db.query<Record<string, unknown>>('SELECT * FROM identities WHERE wallet = $1', [wallet.address]);
    const dump = JSON.stringify(await gw.herald.deps.db.query('SELECT * FROM identities'));
    for (const secret of [email, phone, chat, 'secret.person', '4915112345678']) assert.ok(!dump.includes(secret), `${secret} stored in clear`);
    for (const column of ['email_enc', 'phone_enc', 'telegram_chat_enc']) assert.match(String(row[column]), /^v1\./, column);
    const tokens = JSON.stringify(await gw.herald.deps.db.query('SELECT * FROM telegram_link_tokens WHERE wallet = $1', [wallet.address]));
    const link = JSON.parse(registration).body.telegramLink as string;
    assert.ok(!tokens.includes(new URL(link).searchParams.get('start')!), 'link token stored in clear');

    assert.deepEqual(await loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet.address), { email, telegramChatId: chat });
  });

  it('imports a verified identity, upserts it and removes contacts given as null', async () => {
    const wallet = newWallet().address;
    const created = await importIdentity({ wallet, email: 'ops@example.com', phone: '+819012345678', telegramChatId: '-100200300' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body, { wallet, channels: ['email', 'telegram', 'sms'] });
    assert.deepEqual((await status(wallet)).body, { registered: true, channels: ['email', 'telegram', 'sms'] });
    assert.deepEqual(await loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet), {
      email: 'ops@example.com',
      phone: '+819012345678',
      telegramChatId: '-100200300',
    });

    const updated = await importIdentity({ wallet, email: 'ops2@example.com', phone: null });
    assert.deepEqual(updated.body, { wallet, channels: ['email', 'telegram'] });
    assert.deepEqual(await loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet), { email: 'ops2@example.com', telegramChatId: '-100200300' });
    assert.deepEqual((await importIdentity({ wallet })).body, { wallet, channels: ['email', 'telegram'] });
  });

  it('turns a pending registration into a verified one on import', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'pending@example.com' });
    await importIdentity({ wallet: wallet.address, email: 'pending@example.com' });
    const codes = await gw.herald.deps.db.query('SELECT * FROM identity_codes WHERE wallet = $1', [wallet.address]);
    assert.equal(codes.length, 0);
    assert.deepEqual((await status(wallet.address)).body.channels, ['email']);
  });

  it('refuses an import without the admin token or with invalid values', async () => {
    const wallet = newWallet().address;
    for (const token of ['', 'wrong-token-0123456789', acme.apiKey]) {
      const res = await importIdentity({ wallet, email: 'x@example.com' }, token);
      assert.equal(res.status, 401, token);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'INVALID_ADMIN_TOKEN');
    }
    const cases: [unknown, RegExp][] = [
      [{ wallet, phone: '0612345678' }, /phone/],
      [{ wallet, phone: '+0612345678' }, /phone/],
      [{ wallet, phone: 33612345678 }, /phone/],
      [{ wallet, email: 'nope' }, /email/],
      [{ wallet, telegramChatId: 12345 }, /telegramChatId/],
      [{ wallet, telegramChatId: '12ab' }, /telegramChatId/],
      [{ wallet: 'short', email: 'x@example.com' }, /wallet must be a Solana wallet address/],
      [{ email: 'x@example.com' }, /^wallet is required$/],
    ];
    for (const [body, message] of cases) {
      const res = await importIdentity(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, message);
    }
    assert.equal((await status(wallet)).body.registered, false);
  });

  it('reports reachable channels per registered wallet for the send path', async () => {
    const a = newWallet().address;
    const b = newWallet().address;
    const unknown = newWallet().address;
    await importIdentity({ wallet: a, phone: '+14155550100' });
    await importIdentity({ wallet: b });
    const reachable = await gw.herald.deps.db.transaction((tx) => reachableChannels(tx, [a, b, unknown, a]));
    assert.deepEqual(Object.fromEntries(reachable), { [a]: ['sms'], [b]: [] });
    assert.equal((await reachableChannels(gw.herald.deps.db, [])).size, 0);
  });
});

describe('identity routes per-IP rate limit', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '3' } });
  });
  after(() => gw.close());

  it('answers 429 with the contract error body when one client hammers the public routes', async () => {
    await atNextSecond();
    const wallet = newWallet().address;
    const results = await Promise.all(Array.from({ length: 12 }, () => call(gw.url, undefined, 'POST', '/v1/identities/challenge', { wallet })));
    const refused = results.filter((r) => r.status === 429);
    assert.ok(refused.length >= 3, `only ${refused.length} refused`);
    assert.ok(results.filter((r) => r.status === 200).length <= 6);
    for (const res of refused) {
      assert.ok(isErrorBody(res.body), JSON.stringify(res.body));
      assert.equal(res.body.code, 'RATE_LIMIT_EXCEEDED');
      assert.equal(res.body.error, 'Too Many Requests');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
      assert.equal(res.headers.get('x-ratelimit-limit'), '3');
      assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    }
    const verify = await call(gw.url, undefined, 'POST', '/v1/identities/verify', { wallet, channel: 'email', code: '123456' });
    assert.ok(verify.headers.get('x-ratelimit-limit'));
  });

  it('gives the 429 of a method these paths do not serve the CORS headers, as their 405, and only on paths open to web pages', async () => {
    const refused = async (method: string, path: string) => {
      await atNextSecond();
      const results = await Promise.all(Array.from({ length: 8 }, () => fetch(`${gw.url}${path}`, { method, headers: { origin: 'https://wallet.example' } })));
      const limited = results.find((res) => res.status === 429);
      assert.ok(limited, `no 429 among ${results.map((res) => res.status)}`);
      assert.ok(results.some((res) => res.status === 405), 'under the limit, the path answers 405');
      return limited;
    };
    for (const path of ['/v1/identities/verify', `/v1/identities/${newWallet().address}`]) {
      const limited = await refused('GET', path);
      assert.equal(limited.headers.get('access-control-allow-origin'), '*', path);
      assert.match(limited.headers.get('access-control-expose-headers') ?? '', /Retry-After/, path);
    }
    // A route that takes a key is not opened to web pages, limited or not.
    const keyed = await refused('GET', '/v1/notify');
    assert.equal(keyed.headers.get('access-control-allow-origin'), null);
  });
});

describe('per-IP rate limit behind a proxy (HERALD_TRUST_PROXY)', () => {
  let direct: TestGateway;
  let proxied: TestGateway;
  before(async () => {
    [direct, proxied] = await Promise.all([
      startGateway({ env: { HERALD_IP_RATE_LIMIT: '3' } }),
      // The test client, on the loopback address, plays the proxy in front of the gateway.
      startGateway({ env: { HERALD_IP_RATE_LIMIT: '3', HERALD_TRUST_PROXY: '127.0.0.1, ::1' } }),
    ]);
  });
  after(() => Promise.all([direct.close(), proxied.close()]));

  const challenges = (gw: TestGateway, forwardedFor: (i: number) => string) =>
    Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call(gw.url, undefined, 'POST', '/v1/identities/challenge', { wallet: newWallet().address }, { 'x-forwarded-for': forwardedFor(i) }),
      ),
    );

  it("counts each client the proxy names on its own, and only the proxy's own entry", async () => {
    await atNextSecond();
    const clients = await challenges(proxied, (i) => `198.51.100.${i + 1}`);
    assert.deepEqual(clients.map((r) => r.status), Array(8).fill(200));
    // A client forging entries before the proxy's own is still counted by the proxy's entry.
    const forged = await challenges(proxied, (i) => `203.0.113.${i + 1}, 198.51.100.200`);
    assert.ok(forged.filter((r) => r.status === 429).length >= 2, forged.map((r) => r.status).join(','));
  });

  it('ignores X-Forwarded-For unless told to trust a proxy', async () => {
    await atNextSecond();
    const spoofed = await challenges(direct, (i) => `198.51.100.${i + 1}`);
    assert.ok(spoofed.filter((r) => r.status === 429).length >= 2, spoofed.map((r) => r.status).join(','));
  });
});
