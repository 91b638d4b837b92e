/**
 * Single sends made at the same time share their statements (the reachability read and the
 * reserving insert run once for a batch of requests): each request must still get exactly the
 * answer, channel and quota decision it would have had alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../packages/server/src/db/connection.js';
import { newId } from '../../packages/server/src/ids.js';
import { reserveSends, sendsThisPeriod, type QuotaProtocol } from '../../packages/server/src/limits/quota.js';
import { insertNotificationsReservingMany, sendBatchFor, type DraftNotification, type ReservingInsert } from '../../packages/server/src/notifications/notification-store.js';
import { call, startGateway, type TestGateway } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';

describe('concurrent single sends', () => {
  let gw: TestGateway;
  let db: Database;
  let wallet: string;

  before(async () => {
    // The API alone: rows stay as the send path wrote them.
    gw = await startGateway({ env: { HERALD_ROLE: 'api' } });
    db = gw.herald.deps.db;
    wallet = await registeredWallet(gw.url);
  });
  after(() => gw.close());

  const notify = (key: string, subject: string) => call(gw.url, key, 'POST', '/v1/notify', { wallet, subject, body: 'Health factor 1.05', category: 'defi' });
  const protocolRow = async (id: string) => (await db.query<QuotaProtocol>('SELECT id, tier, overage_enabled FROM protocols WHERE id = $1', [id]))[0];

  it("gives each of 60 concurrent sends from three protocols its own protocol's channel choice", async () => {
    const [plain, smsOnly, optedOut] = await Promise.all([gw.createProtocol(), gw.createProtocol(), gw.createProtocol()]);
    assert.equal((await call(gw.url, smsOnly.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['sms'] })).status, 201);
    assert.equal((await call(gw.url, optedOut.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels: ['email'] })).status, 201);
    assert.equal((await call(gw.url, optedOut.apiKey, 'DELETE', `/v1/subscriptions/${wallet}`)).status, 200);

    const senders = [plain, smsOnly, optedOut];
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => notify(senders[i % 3].apiKey, `burst ${i}`)));
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [202]);
    assert.equal(new Set(answers.map((a) => a.body.notificationId)).size, 60);
    const expected = [
      { status: 'queued', deliveryChannel: 'telegram' },
      { status: 'queued', deliveryChannel: 'sms' },
      { status: 'opted_out', deliveryChannel: null },
    ];
    answers.forEach((a, i) => assert.deepEqual({ status: a.body.status, deliveryChannel: a.body.deliveryChannel }, expected[i % 3], `send ${i}`));

    for (const [i, sender] of senders.entries()) {
      const rows = await db.query<{ subject: string; status: string; channel: string | null }>(
        'SELECT subject, status, channel FROM notifications WHERE protocol_id = $1 ORDER BY subject',
        [sender.id],
      );
      assert.equal(rows.length, 20);
      for (const row of rows) {
        assert.equal(Number(row.subject.split(' ')[1]) % 3, i, 'each row belongs to the protocol that sent it');
        assert.deepEqual({ status: row.status, deliveryChannel: row.channel }, expected[i]);
      }
      assert.equal(await sendsThisPeriod(db, sender.id, new Date()), i === 2 ? 0 : 20, 'opted-out sends are not billed');
    }
  });

  it('holds the quota exactly: 10 concurrent sends with 5 left give five 202 and five 402, and another protocol is not held back', async () => {
    const growth = await gw.createProtocol({ tier: 1 });
    const other = await gw.createProtocol({ tier: 1 });
    assert.equal(await reserveSends(db, await protocolRow(growth.id), 49_995, new Date()), true);

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => notify(i % 2 ? other.apiKey : growth.apiKey, `quota ${i}`)),
    );
    const mine = answers.filter((_, i) => i % 2 === 0);
    assert.deepEqual(
      mine.map((a) => a.status).sort(),
      [202, 202, 202, 202, 202, 402, 402, 402, 402, 402],
    );
    for (const refused of mine.filter((a) => a.status === 402)) assert.equal(refused.body.code, 'INSUFFICIENT_QUOTA');
    assert.deepEqual([...new Set(answers.filter((_, i) => i % 2 === 1).map((a) => a.status))], [202]);
    assert.equal(await sendsThisPeriod(db, growth.id, new Date()), 50_000);
    const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM notifications WHERE protocol_id = $1', [growth.id]);
    assert.equal(n, 5, 'only the accepted sends are written');
  });

  describe('insertNotificationsReservingMany', () => {
    const rowsFor = (protocolId: string, count: number): DraftNotification[] =>
      Array.from({ length: count }, (_, i) => ({
        id: newId.notification(), protocolId, environment: 'production', wallet, subject: `direct ${i}`, body: 'b', category: 'defi',
        priority: 'normal', preferredChannel: null, idempotencyKey: null, payloadHash: null, templateId: null, templateVersion: null,
        templateVariables: null, broadcastId: null, scheduleId: null, writeReceipt: false, createdAt: new Date(), requireRegistered: true,
      }));
    /** Whether each request's sends were reserved (and its rows written). */
    const reserving = async (inserts: ReservingInsert[]) => (await insertNotificationsReservingMany(db, inserts)).map((answer) => answer.reserved);
    const count = async (protocolId: string) =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM notifications WHERE protocol_id = $1', [protocolId]))[0].n;

    it("answers per request: one protocol's refusal leaves the others' rows written", async () => {
      const a = await protocolRow((await gw.createProtocol({ tier: 1 })).id);
      const full = await protocolRow((await gw.createProtocol({ tier: 1 })).id);
      assert.equal(await reserveSends(db, full, 50_000, new Date()), true);
      const now = new Date();
      const answers = await reserving([
        { rows: rowsFor(a.id, 2), protocol: a, now },
        { rows: rowsFor(full.id, 1), protocol: full, now },
        { rows: rowsFor(a.id, 1), protocol: a, now },
      ]);
      assert.deepEqual(answers, [true, false, true]);
      assert.equal(await count(a.id), 3);
      assert.equal(await count(full.id), 0);
      assert.equal(await sendsThisPeriod(db, a.id, now), 3);
      assert.equal(await sendsThisPeriod(db, full.id, now), 50_000);
    });

    it('tries requests of a protocol one by one, in order, when together they do not fit', async () => {
      const p = await protocolRow((await gw.createProtocol({ tier: 1 })).id);
      assert.equal(await reserveSends(db, p, 49_997, new Date()), true);
      const now = new Date();
      const answers = await reserving([
        { rows: rowsFor(p.id, 2), protocol: p, now },
        { rows: rowsFor(p.id, 2), protocol: p, now },
        { rows: rowsFor(p.id, 1), protocol: p, now },
      ]);
      assert.deepEqual(answers, [true, false, true], '2 fit, then 2 more do not, then the last 1 does');
      assert.equal(await count(p.id), 3);
      assert.equal(await sendsThisPeriod(db, p.id, now), 50_000);
    });

    it('writes nothing and counts nothing for a lone request whose reservation does not fit', async () => {
      const full = await protocolRow((await gw.createProtocol({ tier: 1 })).id);
      assert.equal(await reserveSends(db, full, 49_999, new Date()), true);
      const now = new Date();
      assert.deepEqual(await reserving([{ rows: rowsFor(full.id, 2), protocol: full, now }]), [false]);
      assert.equal(await count(full.id), 0, 'the rows written before the reservation was refused are undone');
      assert.equal(await sendsThisPeriod(db, full.id, now), 49_999);
    });

    it('accepts a protocol again once its reservation fits, after refusals', async () => {
      const created = await gw.createProtocol({ tier: 1 });
      const p = await protocolRow(created.id);
      assert.equal(await reserveSends(db, p, 50_000, new Date()), true);
      const now = new Date();
      for (let i = 0; i < 2; i++) {
        assert.deepEqual(await reserving([{ rows: rowsFor(p.id, 1), protocol: p, now }]), [false]);
      }
      // Overage turned on: the same protocol's sends fit again.
      const withOverage = { ...p, overage_enabled: true };
      assert.deepEqual(
        await reserving([{ rows: rowsFor(p.id, 2), protocol: withOverage, now }]),
        [true],
      );
      assert.equal(await count(p.id), 2);
      assert.equal(await sendsThisPeriod(db, p.id, now), 50_002);
    });

    it('never overshoots a quota when batches for the same protocols run at the same time', async () => {
      const limited = await protocolRow((await gw.createProtocol({ tier: 1 })).id);
      const unlimited = await protocolRow((await gw.createProtocol({ tier: 1, overageEnabled: true })).id);
      assert.equal(await reserveSends(db, limited, 49_990, new Date()), true);
      const now = new Date();
      // Eight batches at once, each wanting 3 of the 10 sends left and 5 of an unlimited quota.
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          reserving([
            { rows: rowsFor(unlimited.id, 5), protocol: unlimited, now },
            { rows: rowsFor(limited.id, 3), protocol: limited, now },
          ]),
        ),
      );
      assert.equal(answers.filter(([forUnlimited]) => forUnlimited).length, 8);
      assert.equal(answers.filter(([, forLimited]) => forLimited).length, 3, 'three batches of 3 fit in the 10 left, a fourth would pass the limit');
      assert.equal(await count(limited.id), 9);
      assert.equal(await sendsThisPeriod(db, limited.id, now), 49_999);
      assert.equal(await count(unlimited.id), 40);
      assert.equal(await sendsThisPeriod(db, unlimited.id, now), 40);
    });

    it('answers a statement run again after its commit from the rows it wrote, reserving and counting nothing twice', async () => {
      // What the send batch does when a committed statement's answer is lost with its connection:
      // each request runs again, and finds its ids taken by its own rows.
      const p = await protocolRow((await gw.createProtocol({ tier: 1 })).id);
      const now = new Date();
      const inserts = [
        { rows: rowsFor(p.id, 2), protocol: p, now },
        { rows: rowsFor(p.id, 1), protocol: p, now },
      ];
      const first = await insertNotificationsReservingMany(db, inserts);
      assert.deepEqual(first.map((answer) => answer.reserved), [true, true]);
      assert.deepEqual(await insertNotificationsReservingMany(db, inserts), first);
      assert.deepEqual(await sendBatchFor(db).call(inserts[1]), first[1], 'through the send batch too');
      assert.equal(await count(p.id), 3);
      assert.equal(await sendsThisPeriod(db, p.id, now), 3, 'reserved once');
      const [{ counted }] = await db.query<{ counted: number }>('SELECT sum(count)::int AS counted FROM notification_counts WHERE protocol_id = $1', [p.id]);
      assert.equal(counted, 3, 'counted once');

      // A draft that is not among the rows: the error stands, and nothing new is written.
      const mixed = [{ rows: [inserts[0].rows[0], ...rowsFor(p.id, 1)], protocol: p, now }];
      await assert.rejects(insertNotificationsReservingMany(db, mixed), (error: { code?: string }) => error.code === '23505');
      assert.equal(await count(p.id), 3);
      assert.equal(await sendsThisPeriod(db, p.id, now), 3);
    });

    it('writes sandbox rows (nothing to reserve) of a protocol whose quota is used up', async () => {
      const full = await protocolRow((await gw.createProtocol({ tier: 1 })).id);
      assert.equal(await reserveSends(db, full, 50_000, new Date()), true);
      const now = new Date();
      const sandbox = rowsFor(full.id, 2).map((row) => ({ ...row, environment: 'sandbox' as const }));
      const other = await protocolRow((await gw.createProtocol({ tier: 1 })).id);
      const answers = await reserving([
        { rows: sandbox, protocol: full, now },
        { rows: rowsFor(other.id, 1), protocol: other, now },
      ]);
      assert.deepEqual(answers, [true, true]);
      assert.equal(await count(full.id), 2);
    });
  });
});
