import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { lastCode, newWallet, register, testClock, verify } from './wallet-key.js';

describe('contact verification codes', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  const clock = testClock();

  before(async () => {
    gw = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '100000' }, now: clock.now });
    acme = await gw.createProtocol({ tier: 3 });
  });
  after(() => gw.close());

  const channels = async (wallet: string) => (await call(gw.url, acme.apiKey, 'GET', `/v1/wallets/${wallet}/status`)).body.channels;
  const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  function assertRefused(res: { status: number; body: any }, status: number, code: string, message: RegExp) {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.ok(isErrorBody(res.body));
    assert.equal(res.body.code, code);
    assert.match(res.body.message, message);
  }

  it('counts down the tries of a wrong code, then refuses even the right one', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'tries@example.com' });
    const code = await lastCode(gw, wallet.address, 'email');
    for (const left of ['4 tries', '3 tries', '2 tries', '1 try']) {
      assertRefused(await verify(gw, wallet.address, 'email', wrongCode(code)), 400, 'VALIDATION_ERROR', new RegExp(`^Wrong code; ${left} left$`));
    }
    assertRefused(await verify(gw, wallet.address, 'email', wrongCode(code)), 400, 'VALIDATION_ERROR', /no tries left/);
    assertRefused(await verify(gw, wallet.address, 'email', code), 400, 'VALIDATION_ERROR', /expired or has no tries left; register again/);
    assert.deepEqual(await channels(wallet.address), []);

    // A new registration with the same address sends a fresh code with fresh tries.
    await register(gw, wallet, { email: 'tries@example.com' });
    const fresh = await lastCode(gw, wallet.address, 'email');
    assert.equal((await verify(gw, wallet.address, 'email', fresh)).status, 200);
    assert.deepEqual(await channels(wallet.address), ['email']);
  });

  it('spends at most 5 tries however many guesses arrive at once', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { phone: '+14155550199' });
    const code = await lastCode(gw, wallet.address, 'sms');
    const guesses = await Promise.all(Array.from({ length: 12 }, () => verify(gw, wallet.address, 'sms', wrongCode(code))));
    assert.equal(guesses.filter((r) => /^Wrong code/.test(r.body.message)).length, 5);
    assert.equal(guesses.filter((r) => /no tries left; register again/.test(r.body.message)).length, 7);
    assert.equal((await verify(gw, wallet.address, 'sms', code)).status, 400);
  });

  it('refuses an expired code', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'late@example.com' });
    const code = await lastCode(gw, wallet.address, 'email');
    clock.advance(10 * 60_000 + 1000);
    assertRefused(await verify(gw, wallet.address, 'email', code), 400, 'VALIDATION_ERROR', /expired/);
    assert.deepEqual(await channels(wallet.address), []);
  });

  it('accepts a code just before it expires', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'justintime@example.com' });
    const code = await lastCode(gw, wallet.address, 'email');
    clock.advance(9 * 60_000);
    assert.equal((await verify(gw, wallet.address, 'email', code)).status, 200);
  });

  it('retires the previous code when a new one is sent', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'first@example.com' });
    const old = await lastCode(gw, wallet.address, 'email');
    await register(gw, wallet, { email: 'second@example.com' });
    const current = await lastCode(gw, wallet.address, 'email');
    if (old !== current) assertRefused(await verify(gw, wallet.address, 'email', old), 400, 'VALIDATION_ERROR', /^Wrong code/);
    assert.equal((await verify(gw, wallet.address, 'email', current)).status, 200);
    if (old !== current) assertRefused(await verify(gw, wallet.address, 'email', old), 400, 'VALIDATION_ERROR', /No email address is waiting/);
  });

  it('answers a repeat of a verification that succeeded alike, each repeat spending a try', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'retry@example.com' });
    const code = await lastCode(gw, wallet.address, 'email');
    // A double submit: both calls are answered as verified (tries 1 and 2).
    const both = await Promise.all([verify(gw, wallet.address, 'email', code), verify(gw, wallet.address, 'email', code)]);
    for (const res of both) assert.deepEqual([res.status, res.body], [200, { wallet: wallet.address, channel: 'email', verified: true }]);
    // Another code is no repeat: nothing waits for one (try 3).
    assertRefused(await verify(gw, wallet.address, 'email', wrongCode(code)), 400, 'VALIDATION_ERROR', /^No email address is waiting/);
    for (let i = 4; i <= 5; i++) assert.equal((await verify(gw, wallet.address, 'email', code)).status, 200, `try ${i}`);
    // Its tries are spent: repeats, like guesses, are bounded.
    assertRefused(await verify(gw, wallet.address, 'email', code), 400, 'VALIDATION_ERROR', /^No email address is waiting/);
    assert.deepEqual(await channels(wallet.address), ['email'], 'the contact stays verified');
  });

  it('answers a repeat 400 once the code would have expired, the contact lost its mark, or a registration changed it', async () => {
    const expired = newWallet();
    await register(gw, expired, { email: 'expired-retry@example.com' });
    const code = await lastCode(gw, expired.address, 'email');
    assert.equal((await verify(gw, expired.address, 'email', code)).status, 200);
    clock.advance(10 * 60_000 + 1000);
    assertRefused(await verify(gw, expired.address, 'email', code), 400, 'VALIDATION_ERROR', /^No email address is waiting/);
    assert.deepEqual(await channels(expired.address), ['email']);

    // A provider refused the number for good (a STOP reply): the repeat must not call it verified.
    const stopped = newWallet();
    await register(gw, stopped, { phone: '+14155550142' });
    const smsCode = await lastCode(gw, stopped.address, 'sms');
    assert.equal((await verify(gw, stopped.address, 'sms', smsCode)).status, 200);
    await gw.herald.deps.db.query('UPDATE identities SET phone_verified_at = NULL WHERE wallet = $1', [stopped.address]);
    assertRefused(await verify(gw, stopped.address, 'sms', smsCode), 400, 'VALIDATION_ERROR', /^No phone number is waiting/);

    // A registration that touches the channel retires the used code.
    const changed = newWallet();
    await register(gw, changed, { email: 'changed-retry@example.com' });
    const first = await lastCode(gw, changed.address, 'email');
    assert.equal((await verify(gw, changed.address, 'email', first)).status, 200);
    await register(gw, changed, { email: 'changed-retry-2@example.com' });
    const next = await lastCode(gw, changed.address, 'email');
    if (next !== first) assertRefused(await verify(gw, changed.address, 'email', first), 400, 'VALIDATION_ERROR', /^Wrong code; 4 tries left$/);
    assert.equal((await verify(gw, changed.address, 'email', next)).status, 200);
    assert.deepEqual(await channels(changed.address), ['email']);
  });

  it('refuses codes for a channel with nothing pending and for an unregistered wallet', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'only@example.com' });
    assertRefused(await verify(gw, wallet.address, 'sms', '123456'), 400, 'VALIDATION_ERROR', /No phone number is waiting/);
    assertRefused(await verify(gw, newWallet().address, 'email', '123456'), 404, 'WALLET_NOT_REGISTERED', /has no identity with Herald/);
  });

  it('validates the request', async () => {
    const wallet = newWallet().address;
    const cases: [unknown, RegExp][] = [
      [{ wallet, channel: 'email', code: '12345' }, /code/],
      [{ wallet, channel: 'email', code: '1234567' }, /code/],
      [{ wallet, channel: 'email', code: 'abcdef' }, /code/],
      [{ wallet, channel: 'email', code: 123456 }, /code must be a string/],
      [{ wallet, channel: 'telegram', code: '123456' }, /^channel must be one of: email, sms$/],
      [{ wallet: 'nope', channel: 'email', code: '123456' }, /wallet must be a Solana wallet address/],
      [{ channel: 'email', code: '123456' }, /^wallet is required$/],
    ];
    for (const [body, message] of cases) {
      assertRefused(await call(gw.url, undefined, 'POST', '/v1/identities/verify', body), 400, 'VALIDATION_ERROR', message);
    }
  });

  it('stores codes only as keyed digests', async () => {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'digest@example.com' });
    const code = await lastCode(gw, wallet.address, 'email');
    const rows = await gw.herald.deps.db.query<{ code_hash: string }>('SELECT code_hash FROM identity_codes WHERE wallet = $1', [wallet.address]);
    assert.equal(rows.length, 1);
    assert.match(rows[0].code_hash, /^[0-9a-f]{64}$/);
    assert.ok(!rows[0].code_hash.includes(code));
  });
});
