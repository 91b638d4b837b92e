/**
 * A worker killed with SIGKILL mid-load loses nothing: after a restart every notification ends
 * delivered and nothing stays in `sending`. Messages sent through a provider (email, through a
 * real SMTP server) repeat only for sends whose outcome was not yet committed (at most the batch
 * in flight), once their lease has expired; captured
 * messages are taken, captured and settled in one transaction, so they never repeat.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { ensureBuilt, killStrays, spawnServer } from '../foundation/server-process.js';
import { ADMIN_TOKEN, ENCRYPTION_KEY, call, createProtocol, freshSchema, onPostgres, sleep, waitFor } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { startSmtpServer } from '../support/smtp-server.js';

const TOTAL = 3000;
const BATCH = 100;
const channels = ['email', 'telegram', 'sms'];

async function load(url: string, apiKey: string, wallet: string) {
  for (let start = 0; start < TOTAL; start += 100) {
    const notifications = Array.from({ length: 100 }, (_, i) => ({
      wallet,
      subject: `load ${start + i}`,
      body: 'crash test',
      category: 'system',
      preferredChannel: channels[(start + i) % 3],
    }));
    const res = await call(url, apiKey, 'POST', '/v1/notify/bulk', { notifications });
    assert.equal(res.status, 202, JSON.stringify(res.body));
  }
}

interface Counts {
  delivered: number;
  open: number;
  lost: number;
  extraSends: number;
}

/** Notification id → times its email reached the SMTP server (the Message-ID carries the id). */
function mailsPerNotification(received: { headers: Record<string, string> }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const mail of received) {
    const id = /^<([^@>]+)@/.exec(mail.headers['message-id'] ?? '')?.[1];
    if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

const COUNT_SQL = `
  SELECT
    count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
    count(*) FILTER (WHERE status IN ('queued', 'sending'))::int AS open,
    count(*) FILTER (WHERE c.n IS NULL)::int AS lost,
    coalesce(sum(c.n - 1), 0)::int AS "extraSends"
  FROM notifications n LEFT JOIN (SELECT notification_id, count(*)::int AS n FROM captured_messages GROUP BY notification_id) c
    ON c.notification_id = n.id`;

describe('worker crash safety', () => {
  ensureBuilt();
  after(killStrays);

  it('loses nothing when the worker is killed with SIGKILL mid-batch (PostgreSQL: api + worker processes, email through SMTP)', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const schema = await freshSchema();
    const db = new pg.Client({ connectionString: schema.url });
    const smtp = await startSmtpServer();
    try {
      const env = {
        DATABASE_URL: schema.url,
        HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
        HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
        HERALD_DELIVERY_LEASE_MS: '1500',
        HERALD_WORKER_BATCH: String(BATCH),
        // One delivery loop, so the bound below is the one batch a killed loop leaves behind (each
        // loop of the default two could leave one). A batch slower than the short lease above is
        // no source of repeats: the live loop renews its leases (test/delivery/lease.test.ts).
        HERALD_WORKER_LOOPS: '1',
        HERALD_WORKER_POLL_MS: '50',
        SMTP_URL: smtp.url,
        EMAIL_FROM: 'Herald <notify@herald.test>',
      };
      const api = spawnServer({ ...env, HERALD_ROLE: 'api' });
      const url = await api.listening();
      await db.connect();
      const protocol = await createProtocol(url, { tier: 3, overageEnabled: true });
      const wallet = await registeredWallet(url);
      await load(url, protocol.apiKey, wallet);

      const counts = async () => (await db.query<{ delivered: number }>(`SELECT count(*) FILTER (WHERE status = 'delivered')::int AS delivered FROM notifications`)).rows[0];
      let worker = spawnServer({ ...env, HERALD_ROLE: 'worker' });
      await waitFor(async () => (await counts()).delivered >= 300 && smtp.received.length >= 50, 30_000);
      worker.child.kill('SIGKILL');
      await worker.exited;
      const atKill = await counts();
      assert.ok(atKill.delivered < TOTAL, 'the kill happened mid-load');

      worker = spawnServer({ ...env, HERALD_ROLE: 'worker' });
      await waitFor(async () => (await counts()).delivered === TOTAL, 60_000);
      const { rows } = await db.query<{ id: string; channel: string; status: string; captures: number }>(
        `SELECT n.id, coalesce(n.fallback_channel, n.channel) AS channel, n.status, (SELECT count(*)::int FROM captured_messages c WHERE c.notification_id = n.id) AS captures
         FROM notifications n`,
      );
      const mails = mailsPerNotification(smtp.received);
      const emails = rows.filter((r) => r.channel === 'email');
      const captured = rows.filter((r) => r.channel !== 'email');
      assert.equal(emails.length, TOTAL / 3);
      assert.equal(rows.filter((r) => r.status !== 'delivered').length, 0, 'nothing left queued or sending');
      assert.deepEqual(emails.filter((r) => !mails.get(r.id)), [], 'every email reached the SMTP server');
      const extraMails = emails.reduce((sum, r) => sum + (mails.get(r.id) ?? 0) - 1, 0);
      assert.ok(extraMails <= BATCH, `repeated emails (${extraMails}) only for the one batch in flight`);
      assert.deepEqual(captured.filter((r) => r.captures !== 1), [], 'every captured message captured exactly once');
      await worker.stop();
      await api.stop();
    } finally {
      await db.end().catch(() => {});
      await smtp.close();
      await schema.drop();
    }
  });

  it('a worker paused past its leases starts none of its batch when it resumes: only its sends then at the provider repeat (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const schema = await freshSchema();
    const smtp = await startSmtpServer();
    const CONCURRENCY = 3;
    const EMAILS = 18;
    try {
      const env = {
        DATABASE_URL: schema.url,
        HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
        HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
        HERALD_DELIVERY_LEASE_MS: '2000',
        HERALD_WORKER_LOOPS: '1',
        HERALD_WORKER_POLL_MS: '50',
        HERALD_WORKER_CONCURRENCY: String(CONCURRENCY),
        SMTP_URL: smtp.url,
        EMAIL_FROM: 'Herald <notify@herald.test>',
      };
      const api = spawnServer({ ...env, HERALD_ROLE: 'api' });
      const url = await api.listening();
      const protocol = await createProtocol(url, { tier: 3, overageEnabled: true });
      const wallet = await registeredWallet(url, { email: 'slow@example.com' });
      // Each message takes the SMTP server a second: the batch is claimed whole, sent three at a time.
      smtp.script('slow@example.com', { delayMs: 1000 }, 1000);
      const notifications = Array.from({ length: EMAILS }, (_, i) => ({ wallet, subject: `paused ${i}`, body: 'b', category: 'system', preferredChannel: 'email' }));
      assert.equal((await call(url, protocol.apiKey, 'POST', '/v1/notify/bulk', { notifications })).status, 202);

      const first = spawnServer({ ...env, HERALD_ROLE: 'worker' });
      const delivered = async () => (await call(url, protocol.apiKey, 'GET', '/v1/notifications?status=delivered&limit=1')).body.total as number;
      const sending = async () => (await call(url, protocol.apiKey, 'GET', '/v1/notifications?status=sending&limit=1')).body.total as number;
      await waitFor(async () => (await sending()) === EMAILS, 30_000);
      // Frozen (as a paused container or VM is) with its whole batch claimed and three sends under way.
      first.child.kill('SIGSTOP');
      const second = spawnServer({ ...env, HERALD_ROLE: 'worker' });
      await waitFor(async () => (await delivered()) === EMAILS, 60_000);
      first.child.kill('SIGCONT');
      // Long enough for the resumed worker to have sent its batch, three a second, had it tried.
      await sleep(3000);
      assert.match(first.stdout(), /leases of a batch could have run out/);

      const mails = mailsPerNotification(smtp.received);
      const extra = [...mails.values()].reduce((sum, n) => sum + n - 1, 0);
      assert.equal(mails.size, EMAILS);
      assert.ok(extra <= CONCURRENCY, `${extra} emails repeated: only the ${CONCURRENCY} at the server when the worker froze may`);
      await Promise.all([first.stop(), second.stop(), api.stop()]);
    } finally {
      await smtp.close();
      await schema.drop();
    }
  });

  it('loses nothing when the embedded gateway is killed with SIGKILL and restarted (PGlite)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'herald-crash-'));
    try {
      const env = {
        HERALD_DATA_DIR: dir,
        HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
        HERALD_DELIVERY_LEASE_MS: '1500',
        HERALD_WORKER_BATCH: String(BATCH),
        HERALD_WORKER_POLL_MS: '50',
      };
      let server = spawnServer(env);
      let url = await server.listening();
      const protocol = await createProtocol(url, { tier: 3, overageEnabled: true });
      const wallet = await registeredWallet(url);
      await load(url, protocol.apiKey, wallet);
      await waitFor(async () => {
        const res = await call(url, protocol.apiKey, 'GET', '/v1/notifications?status=delivered&limit=1');
        return res.body.total >= 300;
      }, 30_000);
      server.child.kill('SIGKILL');
      await server.exited;

      server = spawnServer(env);
      url = await server.listening();
      await waitFor(async () => {
        const res = await call(url, protocol.apiKey, 'GET', '/v1/notifications?status=delivered&limit=1');
        return res.body.total === TOTAL;
      }, 90_000);
      await sleep(100);
      const exit = await server.stop();
      assert.equal(exit.code, 0);

      const db = new PGlite(path.join(dir, 'pgdata'));
      const [final] = (await db.query<Counts>(COUNT_SQL)).rows;
      await db.close();
      assert.equal(final.delivered, TOTAL);
      assert.equal(final.open, 0);
      assert.equal(final.lost, 0);
      assert.equal(final.extraSends, 0, 'captured messages are settled in the transaction that takes them: no repeats');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
