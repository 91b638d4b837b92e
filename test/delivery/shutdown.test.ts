import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { call, onPostgres, startGateway, waitFor } from '../support/gateway.js';
import { startTelegramApi, type TestTelegramApi } from '../support/telegram-api.js';
import { registeredWallet } from '../support/wallets.js';

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

    const sql = `SELECT status, attempts, locked_until FROM notifications ORDER BY id`;
    let rows: { status: string; attempts: number; locked_until: Date | null }[];
    if (onPostgres) {
      const client = new pg.Client({ connectionString: gw.databaseUrl });
      await client.connect();
      rows = (await client.query(sql)).rows;
      await client.end();
    } else {
      const db = new PGlite(path.join(dir, 'pgdata'));
      rows = (await db.query<(typeof rows)[number]>(sql)).rows;
      await db.close();
    }
    const delivered = rows.filter((r) => r.status === 'delivered');
    const released = rows.filter((r) => r.status === 'queued');
    assert.equal(delivered.length + released.length, 20, JSON.stringify(rows.map((r) => r.status)));
    assert.equal(delivered.length, telegram.received.length, 'every send that started was completed and recorded');
    assert.ok(delivered.length >= 1 && delivered.length <= 4, `${delivered.length} in flight`);
    for (const row of released) {
      assert.equal(row.locked_until, null);
      assert.equal(row.attempts, 0, 'a released claim does not count as an attempt');
    }
    await gw.close();
  });
});
