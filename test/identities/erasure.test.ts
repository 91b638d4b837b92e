import assert from 'node:assert/strict';
import bs58 from 'bs58';
import { after, before, describe, it } from 'node:test';
import { reachableChannels } from '../../packages/server/src/identities/identity-store.js';
import { ADMIN_TOKEN, call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { challenge, lastCode, newWallet, register, verify, type TestWallet } from './wallet-key.js';

describe('identity erasure', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let globex: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '100000' } });
    acme = await gw.createProtocol({ tier: 3 });
    globex = await gw.createProtocol({ tier: 1 });
  });
  after(() => gw.close());

  async function erase(wallet: TestWallet, purpose: 'register' | 'delete' = 'delete', signer: TestWallet = wallet) {
    const { message, nonce } = await challenge(gw, wallet.address, purpose);
    return call(gw.url, undefined, 'DELETE', `/v1/identities/${wallet.address}`, { nonce, signature: bs58.encode(signer.sign(message)) });
  }

  /** Rows about the wallet in every table the identity touches. */
  async function rowsOf(wallet: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of ['identities', 'identity_codes', 'identity_challenges', 'telegram_link_tokens', 'subscriptions']) {
      counts[table] = (await gw.herald.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE wallet = $1`, [wallet]))[0].n;
    }
    // Herald's own captured messages to the wallet (its verification codes).
    counts.codes_captured = (
      await gw.herald.deps.db.query<{ n: number }>("SELECT count(*)::int AS n FROM captured_messages WHERE protocol_id = 'herald' AND wallet = $1", [wallet])
    )[0].n;
    return counts;
  }

  async function fullyRegistered(): Promise<TestWallet> {
    const wallet = newWallet();
    await register(gw, wallet, { email: 'erase-me@example.com', phone: '+33612345678' });
    await verify(gw, wallet.address, 'email', await lastCode(gw, wallet.address, 'email'));
    await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/identities', { wallet: wallet.address, telegramChatId: '99887766' });
    for (const protocol of [acme, globex]) {
      await gw.herald.deps.db.query(`INSERT INTO subscriptions (protocol_id, wallet, channels) VALUES ($1, $2, ARRAY['email', 'telegram'])`, [
        protocol.id,
        wallet.address,
      ]);
    }
    return wallet;
  }

  it('erases the identity, its codes, challenges, link tokens and every subscription', async () => {
    const wallet = await fullyRegistered();
    const bystander = await fullyRegistered();
    const rows = await rowsOf(wallet.address);
    // Two codes: the phone's, waiting, and the email's, used and kept for a retry of its verification.
    assert.ok(rows.identities === 1 && rows.identity_codes === 2 && rows.telegram_link_tokens === 1 && rows.subscriptions === 2 && rows.codes_captured === 2, JSON.stringify(rows));

    const res = await erase(wallet);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { deleted: true });
    assert.deepEqual(await rowsOf(wallet.address), {
      identities: 0,
      identity_codes: 0,
      identity_challenges: 0,
      telegram_link_tokens: 0,
      subscriptions: 0,
      codes_captured: 0,
    });
    assert.deepEqual((await call(gw.url, acme.apiKey, 'GET', `/v1/wallets/${wallet.address}/status`)).body, { registered: false, channels: [] });
    const reachable = await reachableChannels(gw.herald.deps.db, [wallet.address, bystander.address]);
    assert.deepEqual([...reachable.keys()], [bystander.address]);
    assert.deepEqual([(await rowsOf(bystander.address)).subscriptions, (await rowsOf(bystander.address)).codes_captured], [2, 2], 'other wallets are untouched');
  });

  it('leaves no subscription behind when protocols subscribe or unsubscribe the wallet during its erasure', async () => {
    const protocols = await Promise.all(Array.from({ length: 8 }, () => gw.createProtocol({ tier: 3 })));
    for (let round = 0; round < 3; round++) {
      // Imported by the operator: no verification codes, whose hourly budget per address the other tests use.
      const wallet = newWallet();
      assert.equal((await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/identities', { wallet: wallet.address, email: `race-${round}@example.com` })).status, 201);
      const { message, nonce } = await challenge(gw, wallet.address, 'delete');
      const signature = bs58.encode(wallet.sign(message));
      const writes = protocols.flatMap((protocol, i) => {
        const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
        return [
          later(i).then(() => call(gw.url, protocol.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet.address, channels: ['email'] })),
          later(i + 1).then(() => call(gw.url, protocol.apiKey, 'DELETE', `/v1/subscriptions/${wallet.address}`)),
        ];
      });
      const erased = call(gw.url, undefined, 'DELETE', `/v1/identities/${wallet.address}`, { nonce, signature });
      const answers = await Promise.all(writes);
      assert.equal((await erased).status, 200);
      for (const answer of answers) {
        assert.ok([200, 201, 404].includes(answer.status), JSON.stringify(answer.body));
        if (answer.status === 404) assert.equal(answer.body.code, 'WALLET_NOT_REGISTERED');
      }
      assert.equal((await rowsOf(wallet.address)).subscriptions, 0, `round ${round}: every subscription is erased with the identity`);
    }
  });

  it('needs a challenge issued for deletion, signed by the wallet', async () => {
    const wallet = await fullyRegistered();
    const byPurpose = await erase(wallet, 'register');
    assert.equal(byPurpose.status, 401);
    assert.ok(isErrorBody(byPurpose.body));
    assert.equal(byPurpose.body.code, 'INVALID_SIGNATURE');
    assert.match(byPurpose.body.message, /issued to register/);
    const byIntruder = await erase(wallet, 'delete', newWallet());
    assert.equal(byIntruder.status, 401);
    assert.equal(byIntruder.body.code, 'INVALID_SIGNATURE');
    assert.equal((await rowsOf(wallet.address)).identities, 1);
  });

  it('refuses a replayed deletion', async () => {
    const wallet = await fullyRegistered();
    const { message, nonce } = await challenge(gw, wallet.address, 'delete');
    const body = { nonce, signature: bs58.encode(wallet.sign(message)) };
    assert.equal((await call(gw.url, undefined, 'DELETE', `/v1/identities/${wallet.address}`, body)).status, 200);
    await register(gw, wallet, { email: 'back@example.com' });
    const replay = await call(gw.url, undefined, 'DELETE', `/v1/identities/${wallet.address}`, body);
    assert.equal(replay.status, 401);
    assert.equal((await rowsOf(wallet.address)).identities, 1);
  });

  it('erases the wallet in the path, whatever wallet the body names', async () => {
    const [signer, target] = [newWallet(), newWallet()];
    for (const wallet of [signer, target]) {
      const imported = await call(gw.url, ADMIN_TOKEN, 'POST', '/v1/admin/identities', { wallet: wallet.address, telegramChatId: '4242' });
      assert.equal(imported.status, 201, JSON.stringify(imported.body));
    }
    const { message, nonce } = await challenge(gw, signer.address, 'delete');
    // The signer's own proof, sent for another wallet with the signer named in the body: the body
    // cannot redirect the erasure, and the proof does not match the path's wallet.
    const res = await call(gw.url, undefined, 'DELETE', `/v1/identities/${target.address}`, {
      nonce,
      signature: bs58.encode(signer.sign(message)),
      wallet: signer.address,
    });
    assert.equal(res.status, 401, JSON.stringify(res.body));
    assert.equal((await rowsOf(signer.address)).identities, 1);
    assert.equal((await rowsOf(target.address)).identities, 1);
    // The same proof sent for the signer's own wallet still works: the refusal used nothing.
    const own = await call(gw.url, undefined, 'DELETE', `/v1/identities/${signer.address}`, { nonce, signature: bs58.encode(signer.sign(message)) });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal((await rowsOf(signer.address)).identities, 0);
    assert.equal((await rowsOf(target.address)).identities, 1);
  });

  it('answers 404 for a wallet that is not registered and 400 for a bad wallet or body', async () => {
    const res = await erase(newWallet());
    assert.equal(res.status, 404);
    assert.ok(isErrorBody(res.body));
    assert.equal(res.body.code, 'WALLET_NOT_REGISTERED');
    // A failed attempt changes nothing: a register challenge issued before it, and the delete
    // challenge itself, both still work afterwards.
    const owner = newWallet();
    const registering = await challenge(gw, owner.address);
    const deleting = await challenge(gw, owner.address, 'delete');
    const deletion = { nonce: deleting.nonce, signature: bs58.encode(owner.sign(deleting.message)) };
    const early = await call(gw.url, undefined, 'DELETE', `/v1/identities/${owner.address}`, deletion);
    assert.equal(early.status, 404);
    assert.equal(early.body.code, 'WALLET_NOT_REGISTERED');
    const registered = await call(gw.url, undefined, 'POST', '/v1/identities', {
      wallet: owner.address,
      nonce: registering.nonce,
      signature: bs58.encode(owner.sign(registering.message)),
      email: 'owner@example.com',
    });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    assert.equal((await call(gw.url, undefined, 'DELETE', `/v1/identities/${owner.address}`, deletion)).status, 200);
    assert.equal((await rowsOf(owner.address)).identities, 0);
    const bad = await call(gw.url, undefined, 'DELETE', '/v1/identities/not-a-wallet', { nonce: 'x', signature: 'y' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'VALIDATION_ERROR');
    const noBody = await call(gw.url, undefined, 'DELETE', `/v1/identities/${newWallet().address}`);
    assert.equal(noBody.status, 400);
    assert.equal(noBody.body.code, 'VALIDATION_ERROR');
  });
});
