import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { after, before, describe, it } from 'node:test';
import { ChannelRegistry } from '../../packages/server/src/channels/registry.js';
import { SmtpProvider } from '../../packages/server/src/channels/email.js';
import { TwilioProvider } from '../../packages/server/src/channels/sms.js';
import { startSmtpServer } from '../support/smtp-server.js';
import { startTwilioApi } from '../support/twilio-api.js';
import { ADMIN_TOKEN, call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { challenge, lastCode, newWallet, register, testClock, verify } from './wallet-key.js';

const ROOMY = { HERALD_IP_RATE_LIMIT: '100000' };

describe('identity registration', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  const clock = testClock();

  before(async () => {
    gw = await startGateway({ env: ROOMY, now: clock.now });
    acme = await gw.createProtocol({ tier: 3 });
  });
  after(() => gw.close());

  const post = (body: unknown) => call(gw.url, undefined, 'POST', '/v1/identities', body);
  const status = (wallet: string) => call(gw.url, acme.apiKey, 'GET', `/v1/wallets/${wallet}/status`);

  function assertRefused(res: { status: number; body: any }, status: number, code: string, message?: RegExp) {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.ok(isErrorBody(res.body), JSON.stringify(res.body));
    assert.equal(res.body.code, code);
    if (message) assert.match(res.body.message, message);
  }

  it('may be called from any web page: CORS preflights and headers on the self-registration routes, errors included', async () => {
    const origin = { origin: 'https://app.example.org' };
    for (const [path, method] of [
      ['/v1/identities/challenge', 'POST'],
      ['/v1/identities', 'POST'],
      ['/v1/identities/verify', 'POST'],
      [`/v1/identities/${newWallet().address}`, 'DELETE'],
    ]) {
      const preflight = await fetch(`${gw.url}${path}`, {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type' },
      });
      assert.equal(preflight.status, 204, path);
      assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
      assert.equal(preflight.headers.get('access-control-allow-methods'), method);
      assert.equal(preflight.headers.get('access-control-allow-headers'), 'content-type');
      assert.equal(preflight.headers.get('allow'), `${method}, OPTIONS`);
    }
    const wallet = newWallet();
    const issued = await fetch(`${gw.url}/v1/identities/challenge`, {
      method: 'POST',
      headers: { ...origin, 'content-type': 'application/json' },
      body: JSON.stringify({ wallet: wallet.address }),
    });
    assert.equal(issued.status, 200);
    assert.equal(issued.headers.get('access-control-allow-origin'), '*');
    assert.match(issued.headers.get('access-control-expose-headers') ?? '', /X-Request-Id/);
    const refused = await fetch(`${gw.url}/v1/identities/verify`, { method: 'POST', headers: { ...origin, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('access-control-allow-origin'), '*', 'a page reads the error too');
    // Routes that take a key are not opened to web pages: the key would live in the page.
    const keyed = await fetch(`${gw.url}/v1/wallets/${wallet.address}/status`, { method: 'OPTIONS', headers: origin });
    assert.equal(keyed.headers.get('access-control-allow-origin'), null);
  });

  it('issues a readable challenge naming the gateway, purpose, wallet, nonce and expiry', async () => {
    const wallet = newWallet();
    const before = clock.now().getTime();
    const res = await call(gw.url, undefined, 'POST', '/v1/identities/challenge', { wallet: wallet.address });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['expiresAt', 'message', 'nonce']);
    const { message, nonce, expiresAt } = res.body;
    assert.match(nonce, /^[0-9a-f]{32}$/);
    const ttl = Date.parse(expiresAt) - before;
    assert.ok(ttl >= 5 * 60_000 - 50 && ttl <= 5 * 60_000 + 1000, `ttl ${ttl}`);
    const lines = message.split('\n');
    assert.equal(lines[0], 'Herald identity verification');
    assert.ok(lines.includes(`Gateway: ${gw.herald.deps.config.publicUrl}`));
    assert.ok(lines.includes('Purpose: register or update the contacts of this wallet'));
    assert.ok(lines.includes(`Wallet: ${wallet.address}`));
    assert.ok(lines.includes(`Nonce: ${nonce}`));
    assert.ok(lines.includes(`Expires at: ${expiresAt}`));
    const del = await challenge(gw, wallet.address, 'delete');
    assert.ok(del.message.includes('Purpose: delete this wallet, its contacts and its subscriptions'));
    assert.notEqual(del.nonce, nonce);
  });

  it('refuses a challenge for anything but a 32-byte base58 wallet', async () => {
    for (const wallet of ['', 'abc', '0OIl' + 'A'.repeat(40), bs58.encode(randomBytes(31)), bs58.encode(randomBytes(33)), 42]) {
      const res = await call(gw.url, undefined, 'POST', '/v1/identities/challenge', { wallet });
      assertRefused(res, 400, 'VALIDATION_ERROR', /wallet/);
    }
    assertRefused(await call(gw.url, undefined, 'POST', '/v1/identities/challenge', {}), 400, 'VALIDATION_ERROR', /^wallet is required$/);
    const res = await call(gw.url, undefined, 'POST', '/v1/identities/challenge', { wallet: newWallet().address, purpose: 'steal' });
    assertRefused(res, 400, 'VALIDATION_ERROR', /^purpose must be one of: register, delete$/);
  });

  it('registers with real signatures, sends codes, verifies them and reports the channels', async () => {
    const wallet = newWallet();
    assert.deepEqual((await status(wallet.address)).body, { registered: false, channels: [] });
    const started = clock.now().getTime();
    const res = await register(gw, wallet, { email: 'alice@example.com', phone: '+14155550123' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.wallet, wallet.address);
    assert.equal(res.body.registered, true);
    assert.deepEqual(res.body.channels, { email: 'pending', telegram: 'none', sms: 'pending' });
    assert.deepEqual(res.body.awaitingVerification, ['email', 'sms']);
    assert.match(res.body.telegramLink, /^https:\/\/t\.me\/HeraldNotifyBot\?start=[A-Za-z0-9_-]{32}$/);
    const linkTtl = Date.parse(res.body.telegramLinkExpiresAt) - started;
    assert.ok(linkTtl >= 10 * 60_000 - 50 && linkTtl <= 10 * 60_000 + 1000, `link ttl ${linkTtl}`);
    assert.deepEqual((await status(wallet.address)).body, { registered: true, channels: [] });

    const captured = await gw.herald.deps.db.query<any>('SELECT * FROM captured_messages WHERE wallet = $1 ORDER BY id', [wallet.address]);
    assert.deepEqual(captured.map((m) => [m.protocol_id, m.environment, m.channel]), [
      ['herald', 'production', 'email'],
      ['herald', 'production', 'sms'],
    ]);
    assert.match(captured[0].subject, /verification code/);
    assert.match(captured[1].text, /^\d{6} is your Herald verification code/);

    const email = await verify(gw, wallet.address, 'email', await lastCode(gw, wallet.address, 'email'));
    assert.equal(email.status, 200, JSON.stringify(email.body));
    assert.deepEqual(email.body, { wallet: wallet.address, channel: 'email', verified: true });
    assert.deepEqual((await status(wallet.address)).body, { registered: true, channels: ['email'] });
    assert.equal((await verify(gw, wallet.address, 'sms', await lastCode(gw, wallet.address, 'sms'))).status, 200);
    assert.deepEqual((await status(wallet.address)).body, { registered: true, channels: ['email', 'sms'] });
  });

  it('registers a wallet with no contacts at all', async () => {
    const wallet = newWallet();
    const res = await register(gw, wallet);
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.channels, { email: 'none', telegram: 'none', sms: 'none' });
    assert.deepEqual((await status(wallet.address)).body, { registered: true, channels: [] });
  });

  it('accepts the signature as base64, URL-safe base64 and unpadded base64', async () => {
    const encodings: ((sig: Buffer) => string)[] = [
      (sig) => sig.toString('base64'),
      (sig) => sig.toString('base64url'),
      (sig) => sig.toString('base64').replace(/=+$/, ''),
    ];
    for (const encode of encodings) {
      const wallet = newWallet();
      const { message, nonce } = await challenge(gw, wallet.address);
      const res = await post({ wallet: wallet.address, nonce, signature: encode(wallet.sign(message)) });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
  });

  it('refuses malformed signatures with 400 and keeps the challenge usable', async () => {
    const wallet = newWallet();
    const { message, nonce } = await challenge(gw, wallet.address);
    const signature = wallet.sign(message);
    const malformed = [
      'not a signature!',
      signature.toString('hex'),
      // 62 bytes, not 63: 86 base58 characters can also read as 64 bytes of unpadded base64.
      bs58.encode(signature.subarray(0, 62)),
      bs58.encode(Buffer.concat([signature, Buffer.from([1])])),
      signature.subarray(0, 63).toString('base64'),
      signature.toString('base64').slice(0, -4) + '*//*',
      signature.toString('base64') + '=',
    ];
    for (const bad of malformed) {
      const res = await post({ wallet: wallet.address, nonce, signature: bad });
      assertRefused(res, 400, 'VALIDATION_ERROR', /signature/);
    }
    assertRefused(await post({ wallet: wallet.address, nonce, signature: '' }), 400, 'VALIDATION_ERROR', /signature/);
    assertRefused(await post({ wallet: wallet.address, nonce }), 400, 'VALIDATION_ERROR', /^signature is required$/);
    assertRefused(await post({ wallet: wallet.address, signature: bs58.encode(signature) }), 400, 'VALIDATION_ERROR', /^nonce is required$/);
    assert.equal((await post({ wallet: wallet.address, nonce, signature: bs58.encode(signature) })).status, 201);
  });

  it('refuses forged signatures, signatures by another key and signatures of another message with 401', async () => {
    const wallet = newWallet();
    const intruder = newWallet();
    const { message, nonce } = await challenge(gw, wallet.address);
    const attempts = [
      bs58.encode(randomBytes(64)),
      bs58.encode(intruder.sign(message)),
      bs58.encode(wallet.sign(message.replace(nonce, 'f'.repeat(32)))),
      bs58.encode(wallet.sign(message + '\n')),
    ];
    for (const signature of attempts) {
      assertRefused(await post({ wallet: wallet.address, nonce, signature }), 401, 'INVALID_SIGNATURE', /not the wallet/);
    }
    assert.equal((await status(wallet.address)).body.registered, false);
    // Failed attempts do not use the challenge up: the owner can still answer it.
    assert.equal((await post({ wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(message)) })).status, 201);
  });

  it('refuses the forged signature that a lenient verifier accepts for a small-order address', async () => {
    // The public key y = −1 has order 2: R = identity, S = 0 satisfies the verification equation
    // on every message. The address passes the 32-byte check, so an operator may import it.
    const address = bs58.encode(Buffer.from('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex'));
    const imported = await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/identities', { wallet: address, email: 'owner@example.com' });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const forged = bs58.encode(Buffer.concat([Buffer.from([1]), Buffer.alloc(63)]));
    for (const purpose of ['register', 'delete'] as const) {
      // Half of all messages would pass a lenient check: eight tries each.
      for (let i = 0; i < 8; i++) {
        const { nonce } = await challenge(gw, address, purpose);
        const res =
          purpose === 'register'
            ? await post({ wallet: address, nonce, signature: forged, email: 'attacker@example.com' })
            : await call(gw.url, undefined, 'DELETE', `/v1/identities/${address}`, { nonce, signature: forged });
        assertRefused(res, 401, 'INVALID_SIGNATURE', /not the wallet/);
      }
    }
    assert.deepEqual((await status(address)).body, { registered: true, channels: ['email'] });
  });

  it('refuses a replayed nonce', async () => {
    const wallet = newWallet();
    const { message, nonce } = await challenge(gw, wallet.address);
    const body = { wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(message)), email: 'replay@example.com' };
    assert.equal((await post(body)).status, 201);
    assertRefused(await post(body), 401, 'INVALID_SIGNATURE', /already been used/);
    assertRefused(await post({ ...body, email: 'attacker@example.com' }), 401, 'INVALID_SIGNATURE', /already been used/);
  });

  it('lets exactly one of many concurrent uses of a challenge through, and sends one set of codes', async () => {
    const wallet = newWallet();
    const { message, nonce } = await challenge(gw, wallet.address);
    const body = { wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(message)), email: 'once@example.com', phone: '+14155550999' };
    const results = await Promise.all(Array.from({ length: 8 }, () => post(body)));
    assert.equal(results.filter((r) => r.status === 201).length, 1);
    for (const r of results.filter((r) => r.status !== 201)) assertRefused(r, 401, 'INVALID_SIGNATURE', /already been used/);
    // Codes go out only for the use that took the challenge: the others are refused before.
    const sent = await gw.herald.deps.db.query<{ channel: string; n: number }>(
      'SELECT channel, count(*)::int AS n FROM captured_messages WHERE wallet = $1 GROUP BY channel ORDER BY channel',
      [wallet.address],
    );
    assert.deepEqual(sent, [{ channel: 'email', n: 1 }, { channel: 'sms', n: 1 }]);
  });

  it('sends at most 5 codes an hour to one address or number, and 10 for one wallet, then answers 429', async () => {
    // Five wallets ask for codes to one inbox (written in any case): the sixth is refused and
    // nothing is written for it; another inbox is not held back.
    for (let i = 0; i < 5; i++) {
      const res = await register(gw, newWallet(), { email: i % 2 ? 'Flooded@Example.org' : 'flooded@example.org' });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const sixth = newWallet();
    // The refusal's second, as the gateway's clock read it, lies between these two readings.
    const askedS = Math.ceil(clock.now().getTime() / 1000);
    const refused = await register(gw, sixth, { email: 'flooded@example.org' });
    const answeredS = Math.ceil(clock.now().getTime() / 1000);
    assertRefused(refused, 429, 'RATE_LIMIT_EXCEEDED', /Too many verification codes sent to this address or number \(5 an hour\)/);
    const wait = Number(refused.headers.get('retry-after'));
    assert.ok(wait > 3000);
    // The rate-limit headers describe the hourly limit that refused, agreeing with Retry-After.
    assert.deepEqual(
      ['x-ratelimit-limit', 'x-ratelimit-remaining'].map((name) => refused.headers.get(name)),
      ['5', '0'],
    );
    const refusedS = Number(refused.headers.get('x-ratelimit-reset')) - wait;
    assert.ok(refusedS >= askedS && refusedS <= answeredS, `Reset ${refused.headers.get('x-ratelimit-reset')} is Retry-After ${wait} s from the refusal`);
    assert.equal((await status(sixth.address)).body.registered, false);
    assert.equal((await register(gw, sixth, { email: 'other-inbox@example.org' })).status, 201);

    // One wallet, ten codes to ten numbers: the eleventh is refused.
    const pumper = newWallet();
    for (let i = 0; i < 10; i++) assert.equal((await register(gw, pumper, { phone: `+1415555${String(1000 + i)}` })).status, 201);
    const pumped = await register(gw, pumper, { phone: '+14155552000' });
    assertRefused(pumped, 429, 'RATE_LIMIT_EXCEEDED', /this wallet \(10 an hour\)/);
    assert.deepEqual(
      ['x-ratelimit-limit', 'x-ratelimit-remaining'].map((name) => pumped.headers.get(name)),
      ['10', '0'],
    );

    // An hour later both budgets are back.
    clock.advance(60 * 60 * 1000 + 1000);
    assert.equal((await register(gw, newWallet(), { email: 'flooded@example.org' })).status, 201);
    assert.equal((await register(gw, pumper, { phone: '+14155552000' })).status, 201);
  });

  it('holds the hourly code limits for registrations arriving at once', async () => {
    // Twelve wallets ask for a code to one inbox at the same moment: five get one.
    const signed = async (wallet: ReturnType<typeof newWallet>, contacts: Record<string, string>) => {
      const { message, nonce } = await challenge(gw, wallet.address);
      return { wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(message)), ...contacts };
    };
    const wallets = Array.from({ length: 12 }, () => newWallet());
    const bodies = [];
    for (const wallet of wallets) bodies.push(await signed(wallet, { email: 'burst@example.org' }));
    const answers = await Promise.all(bodies.map((body) => post(body)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [...Array(5).fill(201), ...Array(7).fill(429)]);
    const [{ n }] = await gw.herald.deps.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM captured_messages WHERE channel = 'email' AND wallet = ANY($1::text[])",
      [wallets.map((w) => w.address)],
    );
    assert.equal(n, 5, 'five codes reached the inbox');

    // One wallet, twelve challenges used at once for twelve numbers: ten codes.
    const pumper = newWallet();
    const pumped = [];
    for (let i = 0; i < 12; i++) pumped.push(await signed(pumper, { phone: `+1415556${String(1000 + i)}` }));
    const results = await Promise.all(pumped.map((body) => post(body)));
    assert.equal(results.filter((r) => r.status === 201).length, 10);
    for (const r of results.filter((r) => r.status !== 201)) assertRefused(r, 429, 'RATE_LIMIT_EXCEEDED', /this wallet \(10 an hour\)/);
    clock.advance(60 * 60 * 1000 + 1000);
  });

  it('refuses an expired challenge', async () => {
    const wallet = newWallet();
    const { message, nonce } = await challenge(gw, wallet.address);
    clock.advance(5 * 60_000 + 1000);
    assertRefused(await post({ wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(message)) }), 401, 'INVALID_SIGNATURE', /expired/);
  });

  it('refuses a nonce issued for another wallet, an unknown nonce, and a delete challenge', async () => {
    const alice = newWallet();
    const mallory = newWallet();
    const issued = await challenge(gw, alice.address);
    // Mallory signs Alice's message with her own key: the nonce is bound to Alice's wallet.
    const res = await post({ wallet: mallory.address, nonce: issued.nonce, signature: bs58.encode(mallory.sign(issued.message)) });
    assertRefused(res, 401, 'INVALID_SIGNATURE', /another wallet/);
    const unknown = await post({ wallet: alice.address, nonce: 'f'.repeat(32), signature: bs58.encode(alice.sign(issued.message)) });
    assertRefused(unknown, 401, 'INVALID_SIGNATURE', /Unknown challenge/);
    const del = await challenge(gw, alice.address, 'delete');
    const wrongPurpose = await post({ wallet: alice.address, nonce: del.nonce, signature: bs58.encode(alice.sign(del.message)) });
    assertRefused(wrongPurpose, 401, 'INVALID_SIGNATURE', /issued to delete/);
    assert.equal((await status(alice.address)).body.registered, false);
  });

  it('validates email and phone', async () => {
    const wallet = newWallet();
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ email: 'not-an-email' }, /^email must be a valid email$/],
      [{ email: 'a@' }, /email/],
      [{ email: `${'a'.repeat(250)}@example.com` }, /email/],
      // SMTP's limit before the @ (RFC 5321): the provider would refuse it at every send.
      [{ email: `${'a'.repeat(65)}@example.com` }, /^email must be a valid email$/],
      [{ email: 42 }, /email/],
      [{ phone: '14155550123' }, /phone/],
      [{ phone: '+04155550123' }, /phone/],
      [{ phone: '+1415' }, /phone/],
      [{ phone: '+683400' }, /phone/],
      [{ phone: '+1415555012345678' }, /phone/],
      [{ phone: '+1 415 555 0123' }, /phone/],
    ];
    for (const [contacts, message] of bad) {
      const { message: text, nonce } = await challenge(gw, wallet.address);
      const res = await post({ wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(text)), ...contacts });
      assertRefused(res, 400, 'VALIDATION_ERROR', message);
    }
    assert.equal((await status(wallet.address)).body.registered, false);
    // The shortest numbers in use have 7 digits (Niue).
    const { message: text, nonce } = await challenge(gw, wallet.address);
    assert.equal((await post({ wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(text)), phone: '+6834001' })).status, 201);
    const again = await challenge(gw, wallet.address);
    const longest = `${'a'.repeat(64)}@example.com`;
    assert.equal((await post({ wallet: wallet.address, nonce: again.nonce, signature: bs58.encode(wallet.sign(again.message)), email: longest })).status, 201);
  });

  it('updates contacts on re-registration: unchanged stays verified, a replacement serves once verified, null removes', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'old@example.com', phone: '+447700900123' });
    await verify(gw, wallet.address, 'email', await lastCode(gw, wallet.address, 'email'));
    await verify(gw, wallet.address, 'sms', await lastCode(gw, wallet.address, 'sms'));
    const count = async () =>
      (await gw.herald.deps.db.query<{ n: number }>('SELECT count(*)::int AS n FROM captured_messages WHERE wallet = $1', [wallet.address]))[0].n;
    const contacts = () =>
      import('../../packages/server/src/identities/identity-store.js').then((m) => m.loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet.address));
    const sent = await count();

    const same = await register(gw, wallet, { email: 'old@example.com' });
    assert.deepEqual(same.body.channels, { email: 'verified', telegram: 'none', sms: 'verified' });
    assert.deepEqual(same.body.awaitingVerification, []);
    assert.equal(await count(), sent, 'no code is sent for an unchanged, verified contact');

    // A new address for a verified one: the old keeps carrying messages until the new is verified.
    const changed = await register(gw, wallet, { email: 'new@example.com', phone: null });
    assert.equal(changed.status, 201, JSON.stringify(changed.body));
    assert.deepEqual(changed.body.channels, { email: 'verified', telegram: 'none', sms: 'none' });
    assert.deepEqual(changed.body.awaitingVerification, ['email']);
    assert.deepEqual((await status(wallet.address)).body, { registered: true, channels: ['email'] });
    assert.deepEqual(await contacts(), { email: 'old@example.com' }, 'the verified address still serves; the removed number does not');
    const [row] = await gw.herald.deps.db.query<{ email_pending_enc: string }>('SELECT email_pending_enc FROM identities WHERE wallet = $1', [wallet.address]);
    assert.equal(gw.herald.deps.secrets.decrypt(row.email_pending_enc), 'new@example.com', 'the replacement waits, encrypted');
    assert.equal(await count(), sent + 1, 'one code, for the new address');

    // Giving the old address again withdraws the replacement, and its code dies.
    const newCode = await lastCode(gw, wallet.address, 'email');
    const back = await register(gw, wallet, { email: 'old@example.com' });
    assert.deepEqual(back.body.awaitingVerification, []);
    assert.equal((await verify(gw, wallet.address, 'email', newCode)).status, 400);
    assert.deepEqual(await contacts(), { email: 'old@example.com' });

    // Verifying the replacement's code puts it in the old one's place.
    await register(gw, wallet, { email: 'newer@example.com' });
    assert.equal((await verify(gw, wallet.address, 'email', await lastCode(gw, wallet.address, 'email'))).status, 200);
    assert.deepEqual(await contacts(), { email: 'newer@example.com' });
    assert.deepEqual((await status(wallet.address)).body, { registered: true, channels: ['email'] });
    const after = await register(gw, wallet, {});
    assert.deepEqual([after.body.channels.email, after.body.awaitingVerification], ['verified', []]);

    // An unverified contact is simply replaced, and carries nothing until verified.
    await register(gw, wallet, { phone: '+447700900124' });
    const replaced = await register(gw, wallet, { phone: '+447700900125' });
    assert.deepEqual([replaced.body.channels.sms, replaced.body.awaitingVerification], ['pending', ['sms']]);
    assert.deepEqual(await contacts(), { email: 'newer@example.com' }, 'unverified contacts are not handed to the delivery worker');

    // null removes a verified contact and its replacement in waiting.
    await register(gw, wallet, { email: 'newest@example.com' });
    const removed = await register(gw, wallet, { email: null });
    assert.deepEqual([removed.body.channels.email, removed.body.awaitingVerification], ['none', ['sms']]);
    assert.deepEqual((await status(wallet.address)).body, { registered: true, channels: [] });
    assert.equal((await verify(gw, wallet.address, 'email', await lastCode(gw, wallet.address, 'email'))).status, 400);
  });

  it('never undoes a verification that lands while a registration is sending its codes', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'owner@example.com' });
    const ownerCode = await lastCode(gw, wallet.address, 'email');
    const contacts = () =>
      import('../../packages/server/src/identities/identity-store.js').then((m) => m.loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet.address));
    // The owner verifies the first address at the moment a second registration sends its code.
    const capture = gw.herald.deps.channels.capture;
    const send = capture.send.bind(capture);
    let verified: Awaited<ReturnType<typeof verify>> | undefined;
    capture.send = async (message) => {
      if (!verified && message.meta.wallet === wallet.address) verified = await verify(gw, wallet.address, 'email', ownerCode);
      return send(message);
    };
    try {
      const second = await register(gw, wallet, { email: 'typo@example.com' });
      assert.equal(verified?.status, 200);
      assert.equal(second.status, 201, JSON.stringify(second.body));
      // Planned from the row as the verification left it: the new address is a replacement in waiting.
      assert.deepEqual([second.body.channels.email, second.body.awaitingVerification], ['verified', ['email']]);
    } finally {
      capture.send = send;
    }
    assert.deepEqual(await contacts(), { email: 'owner@example.com' }, 'the address just verified still serves');
    assert.equal((await verify(gw, wallet.address, 'email', await lastCode(gw, wallet.address, 'email'))).status, 200);
    assert.deepEqual(await contacts(), { email: 'typo@example.com' });
  });

  it('answers 409 and changes nothing when a contact it planned no code for changed meanwhile; the same challenge then works', async () => {
    const wallet = newWallet();
    assert.equal((await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/identities', { wallet: wallet.address, email: 'kept@example.com' })).status, 201);
    const { message, nonce } = await challenge(gw, wallet.address);
    const body = { wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(message)), email: 'kept@example.com', phone: '+447700900200' };
    // While the phone's code goes out, the operator removes the email the plan took as verified.
    const capture = gw.herald.deps.channels.capture;
    const send = capture.send.bind(capture);
    let removed = false;
    capture.send = async (outbound) => {
      if (!removed && outbound.meta.wallet === wallet.address) {
        removed = (await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/identities', { wallet: wallet.address, email: null })).status === 201;
      }
      return send(outbound);
    };
    try {
      const refused = await call(gw.url, undefined, 'POST', '/v1/identities', body);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.ok(isErrorBody(refused.body));
      assert.equal(refused.body.code, 'CONFLICT');
      assert.match(refused.body.message, /send the same challenge again/);
    } finally {
      capture.send = send;
    }
    assert.deepEqual((await status(wallet.address)).body, { registered: true, channels: [] }, 'nothing was changed');
    const again = await call(gw.url, undefined, 'POST', '/v1/identities', body);
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.deepEqual(again.body.awaitingVerification, ['email', 'sms']);
  });

  it('changes nothing when a code cannot be sent, and the same challenge works once the provider is back', async () => {
    // A real SMTP server that answers 451 (try later) to this recipient.
    const smtp = await startSmtpServer();
    smtp.script('later@example.com', { code: 451, message: 'Greylisted, try later' }, 5);
    const down = new SmtpProvider({ url: smtp.url, from: 'Herald <codes@herald.test>' });
    const wallet = newWallet();
    const { message, nonce } = await challenge(gw, wallet.address);
    const body = { wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(message)), email: 'later@example.com' };
    const working = gw.herald.deps.channels;
    gw.herald.deps.channels = new ChannelRegistry(gw.herald.deps.db, { email: down });
    try {
      const res = await post(body);
      assertRefused(res, 503, 'SERVICE_UNAVAILABLE', /could not be sent by email/);
      assert.ok(res.headers.get('retry-after'));
    } finally {
      gw.herald.deps.channels = working;
      await down.close();
      await smtp.close();
    }
    assert.equal((await status(wallet.address)).body.registered, false);
    const [{ n }] = await gw.herald.deps.db.query<{ n: number }>("SELECT count(*)::int AS n FROM identity_code_sends WHERE subject = $1", [`wallet:${wallet.address}`]);
    assert.equal(n, 0, 'a code that did not go out gives its place in the hourly limits back');
    const retried = await post(body);
    assert.equal(retried.status, 201);
    assert.equal(retried.body.channels.email, 'pending');
  });

  it('answers 400 naming the contact when its provider refuses it for good (a bounce, an invalid number), and the challenge still works', async () => {
    const smtp = await startSmtpServer();
    smtp.script('nobody@example.com', { code: 550 }, 5);
    const twilio = await startTwilioApi();
    twilio.script({ kind: 'error', code: 21211 }, { to: '+15550000002', times: 5 });
    const providers = {
      email: new SmtpProvider({ url: smtp.url, from: 'Herald <codes@herald.test>' }),
      sms: new TwilioProvider({ accountSid: twilio.accountSid, authToken: twilio.authToken, from: '+15005550006', apiUrl: twilio.url }),
    };
    const wallet = newWallet();
    const { message, nonce } = await challenge(gw, wallet.address);
    const signed = { wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(message)) };
    const working = gw.herald.deps.channels;
    gw.herald.deps.channels = new ChannelRegistry(gw.herald.deps.db, providers);
    try {
      const bounced = await post({ ...signed, email: 'nobody@example.com' });
      assertRefused(bounced, 400, 'VALIDATION_ERROR', /^email cannot receive the verification code: the provider refused it for good \(SMTP 550/);
      assert.equal(bounced.headers.get('retry-after'), null);
      assert.ok(!bounced.body.message.includes('nobody@example.com'), 'the address is not echoed');
      const invalid = await post({ ...signed, phone: '+15550000002' });
      assertRefused(invalid, 400, 'VALIDATION_ERROR', /^phone cannot receive the verification code: the provider refused it for good \(Twilio 400: 21211/);
      assert.ok(!invalid.body.message.includes('5550000002'), 'the number is not echoed');
      assert.equal((await status(wallet.address)).body.registered, false);
      // Of two codes, the one that went out keeps its places and the refused one gives them back.
      const both = await post({ ...signed, email: 'sent@example.com', phone: '+15550000002' });
      assert.equal(both.status, 400);
      const places = await gw.herald.deps.db.query<{ subject: string }>('SELECT subject FROM identity_code_sends WHERE subject = $1', [`wallet:${wallet.address}`]);
      assert.equal(places.length, 1, 'one place under the wallet: the email code that went out');
      const corrected = await post({ ...signed, email: 'somebody@example.com' });
      assert.equal(corrected.status, 201, 'the challenge was given back');
    } finally {
      gw.herald.deps.channels = working;
      await providers.email.close();
      await smtp.close();
      await twilio.close();
    }
  });
});
