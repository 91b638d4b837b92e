import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Queryable } from '../../packages/server/src/db/connection.js';
import { recipientReader } from '../../packages/server/src/delivery/recipient-reader.js';
import { call, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { importIdentity, makeWallet, registeredWallet } from '../support/wallets.js';
import { challenge } from '../identities/wallet-key.js';

/**
 * What a claimed batch's rows are checked against before each send: the wallets' contacts and
 * subscriptions, read again for the rows not yet started once the last read began more than half
 * a second before (on the reader's clock, set by the tests).
 */
describe('the recipient reader of a claimed batch', () => {
  let gw: TestGateway;
  let acme: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
  });
  after(() => gw.close());

  const subscribe = async (wallet: string, channels: string[]) =>
    assert.ok([200, 201].includes((await call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels })).status));
  const rowsOf = (wallets: string[]) => wallets.map((wallet, i) => ({ id: `row${i}`, protocol_id: acme.id, wallet }));

  /** The gateway's database, with the wallets each read asked for, and a failure to give once on demand. */
  function watched() {
    const asked: string[][] = [];
    let failNext = false;
    const db: Queryable = {
      query: async (text, params) => {
        if (/FROM identities/.test(text)) {
          asked.push([...(params![0] as string[])].sort());
          if (failNext) {
            failNext = false;
            throw new Error('connection terminated unexpectedly');
          }
        }
        return gw.herald.deps.db.query(text, params);
      },
    };
    return { db, asked, failOnce: () => (failNext = true) };
  }

  it('reads the subscriptions and contacts again for the rows not yet started once the last read is half a second old', async () => {
    const [first, second] = await Promise.all([registeredWallet(gw.url, { email: 'r1@example.com' }), registeredWallet(gw.url, { email: 'r2@example.com' })]);
    for (const wallet of [first, second]) await subscribe(wallet, ['email']);
    const rows = rowsOf([first, second]);
    const { db, secrets } = gw.herald.deps;
    let now = 0;
    const read = await recipientReader(db, secrets, rows, () => now);
    assert.equal((await read.read(rows[0])).subscription?.subscribed, true);
    await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${second}`);
    now = 400;
    assert.equal((await read.read(rows[1])).subscription?.subscribed, true, 'within the read');
    now = 0;
    const again = await recipientReader(db, secrets, rows, () => now);
    await again.read(rows[0]);
    now = 501;
    const fresh = await again.read(rows[1]);
    assert.equal(fresh.subscription?.subscribed, false, 'read again once the last read began more than 500 ms before');
    assert.equal(fresh.contacts?.email, 'r2@example.com');
  });

  it('finds no contact for a wallet whose identity was erased since the last read', async () => {
    const key = makeWallet();
    await importIdentity(gw.url, key.address, { email: 'erased@example.com', phone: '+15555550172' });
    const kept = await registeredWallet(gw.url, { email: 'kept@example.com' });
    const rows = rowsOf([kept, key.address]);
    let now = 0;
    const read = await recipientReader(gw.herald.deps.db, gw.herald.deps.secrets, rows, () => now);
    assert.equal((await read.read(rows[0])).contacts?.email, 'kept@example.com');
    const { message, nonce } = await challenge(gw, key.address, 'delete');
    const erased = await call(gw.url, undefined, 'DELETE', `/v1/identities/${key.address}`, { nonce, signature: key.sign(message) });
    assert.equal(erased.status, 200, JSON.stringify(erased.body));
    now = 501;
    assert.deepEqual(await read.read(rows[1]), { contacts: undefined, subscription: undefined });
  });

  it('fails the first read as the batch, before any row is checked', async () => {
    const wallet = await registeredWallet(gw.url, { email: 'first@example.com' });
    const { db, failOnce } = watched();
    failOnce();
    await assert.rejects(recipientReader(db, gw.herald.deps.secrets, rowsOf([wallet])), /connection terminated/);
  });

  it("rejects the rows waiting on a read that failed, keeps what the last good read knew, and reads again for the next row", async () => {
    const wallets = await Promise.all(['a', 'b', 'c'].map((n) => registeredWallet(gw.url, { email: `${n}@example.com`, phone: '+15555550173' })));
    const rows = rowsOf(wallets);
    const { db, asked, failOnce } = watched();
    let now = 0;
    const read = await recipientReader(db, gw.herald.deps.secrets, rows, () => now);
    now = 501;
    failOnce();
    // Two rows starting together share the one read, and its failure.
    const results = await Promise.allSettled([read.read(rows[0]), read.read(rows[1])]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
    assert.equal(asked.length, 2, 'the first read, then one shared read');
    // What the last read that succeeded found: the fallback of a critical message still knows the phone.
    assert.equal(read.lastKnown(rows[0]).contacts?.hasPhone, true);
    // The failed read is not kept: the next row reads again, and finds its wallet.
    assert.equal((await read.read(rows[2])).contacts?.email, 'c@example.com');
    assert.equal(asked.length, 3);
  });

  it('leaves rows that will not be sent out of later reads', async () => {
    const wallets = await Promise.all(['d', 'e', 'f'].map((n) => registeredWallet(gw.url, { email: `${n}@example.com` })));
    const rows = rowsOf(wallets);
    const { db, asked } = watched();
    let now = 0;
    const read = await recipientReader(db, gw.herald.deps.secrets, rows, () => now);
    read.skip(rows[1]);
    now = 501;
    await read.read(rows[2]);
    assert.deepEqual(asked, [[...wallets].sort(), [wallets[0], wallets[2]].sort()]);
  });
});
