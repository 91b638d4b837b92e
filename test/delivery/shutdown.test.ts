import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { call, onPostgres, startGateway, waitFor } from '../support/gateway.js';
import { startSmtpServer } from '../support/smtp-server.js';
import { startTelegramApi, type TestTelegramApi } from '../support/telegram-api.js';
import { registeredWallet } from '../support/wallets.js';

type Row = { status: string; attempts: number; locked_until: Date | null };

/** The notifications as stored, read once the gateway has closed its database. */
async function rowsAfterClose(databaseUrl: string | undefined, dir: string): Promise<Row[]> {
  const sql = `SELECT status, attempts, locked_until FROM notifications ORDER BY id`;
  if (onPostgres) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const { rows } = await client.query(sql);
    await client.end();
    return rows;
  }
  const db = new PGlite(path.join(dir, 'pgdata'));
  const { rows } = await db.query<Row>(sql);
  await db.close();
  return rows;
}

/**
 * What a graceful stop must leave: every row delivered or given back (queued, unleased, the
 * attempt not counted), and exactly as many delivered as the provider took, so none goes out again.
 */
function assertStoppedCleanly(rows: Row[], total: number, takenByProvider: number): { delivered: Row[]; released: Row[] } {
  const delivered = rows.filter((r) => r.status === 'delivered');
  const released = rows.filter((r) => r.status === 'queued');
  assert.equal(delivered.length + released.length, total, JSON.stringify(rows.map((r) => r.status)));
  assert.equal(delivered.length, takenByProvider, 'every send the provider took is recorded: none goes out again');
  for (const row of released) assert.deepEqual([row.attempts, row.locked_until], [0, null], 'a released claim is unleased and not counted as an attempt');
  return { delivered, released };
}

describe('worker graceful shutdown', () => {
  let telegram: TestTelegramApi;
  const dir = mkdtempSync(path.join(tmpdir(), 'herald-shutdown-'));
  before(async () => {
    telegram = await startTelegramApi();
  });
  after(async () => {
    await telegram.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes in-flight sends and releases the claims it had not started', async () => {
    // A data dir on disk (PGlite) so the rows can be read after the gateway has closed its database.
    const gw = await startGateway({
      env: {
        ...(onPostgres ? {} : { HERALD_DATA_DIR: dir }),
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_URL: telegram.url,
        HERALD_WORKER_BATCH: '20',
        HERALD_WORKER_CONCURRENCY: '2',
        HERALD_WORKER_POLL_MS: '50',
      },
    });
    const protocol = await gw.createProtocol({ tier: 3 });
    const wallet = await registeredWallet(gw.url, { telegramChatId: '31337' });
    telegram.script({ kind: 'delay', ms: 700 }, { times: 100 });
    const notifications = Array.from({ length: 20 }, (_, i) => ({ wallet, subject: `s${i}`, body: 'b', category: 'system' }));
    assert.equal((await call(gw.url, protocol.apiKey, 'POST', '/v1/notify/bulk', { notifications })).status, 202);

    // the whole batch is claimed; two sends are stalled at the provider
    await waitFor(async () => (await gw.herald.deps.db.query(`SELECT 1 FROM notifications WHERE status = 'sending'`)).length === 20);
    await waitFor(async () => telegram.received.length >= 1);

    await gw.herald.close();

    const { delivered } = assertStoppedCleanly(await rowsAfterClose(gw.databaseUrl, dir), 20, telegram.received.length);
    assert.ok(delivered.length >= 1 && delivered.length <= 4, `${delivered.length} in flight`);
    await gw.close();
  });

  it('starts no more emails than the SMTP pool carries, so a stop gives the rest back instead of sending them twice', async () => {
    const smtpDir = mkdtempSync(path.join(tmpdir(), 'herald-shutdown-smtp-'));
    const smtp = await startSmtpServer();
    smtp.script('slow@example.com', { delayMs: 700 }, 100);
    // The default concurrency (50) is far above the pool's 5 connections.
    const gw = await startGateway({
      env: { ...(onPostgres ? {} : { HERALD_DATA_DIR: smtpDir }), SMTP_URL: smtp.url, EMAIL_FROM: 'Herald <n@herald.test>', HERALD_WORKER_POLL_MS: '50' },
    });
    try {
      const protocol = await gw.createProtocol({ tier: 3 });
      const wallet = await registeredWallet(gw.url, { email: 'slow@example.com' });
      const notifications = Array.from({ length: 30 }, (_, i) => ({ wallet, subject: `s${i}`, body: 'b', category: 'system' }));
      assert.equal((await call(gw.url, protocol.apiKey, 'POST', '/v1/notify/bulk', { notifications })).status, 202);
      await waitFor(async () => smtp.received.length >= 1);

      await gw.herald.close();
      const { released } = assertStoppedCleanly(await rowsAfterClose(gw.databaseUrl, smtpDir), 30, smtp.received.length);
      assert.ok(released.length >= 15, `${released.length} given back`);
    } finally {
      await gw.close();
      await smtp.close();
      rmSync(smtpDir, { recursive: true, force: true });
    }
  });
});
