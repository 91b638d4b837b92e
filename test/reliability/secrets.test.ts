/**
 * Secrets at rest and in logs. A gateway process (logging at debug) serves a run that touches
 * every secret and contact it handles: API keys, a webhook secret, imported and self-registered
 * identities (verification codes, a Telegram link), deliveries that succeed, bounce, fail and
 * retry at providers that echo the address back. Afterwards no API key, webhook secret,
 * credential, email address, phone number or Telegram chat id is found in clear in any text, json
 * or array column of any table, in the process's output, or in the API's answers.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { ensureBuilt, killStrays } from '../foundation/server-process.js';
import { ADMIN_TOKEN, ENCRYPTION_KEY, call, createProtocol, freshSchema, onPostgres, waitFor, type TestGateway } from '../support/gateway.js';
import { importIdentity, makeWallet } from '../support/wallets.js';
import { newWallet, register } from '../identities/wallet-key.js';
import { Cluster, type Node } from './support/cluster.js';
import { TEST_TIMEOUT_MS } from './support/mode.js';
import { dumpSchema, findLeaks, type Needle } from './support/secret-scan.js';
import { startSinks, type Sinks } from './support/sinks.js';

const TELEGRAM_WEBHOOK_SECRET = `tg-${randomBytes(8).toString('hex')}`;
const SMTP_PASSWORD = `smtp-${randomBytes(8).toString('hex')}`;
const uniq = () => randomBytes(3).toString('hex');

describe('secrets at rest and in logs', { timeout: TEST_TIMEOUT_MS }, () => {
  let sinks: Sinks;
  let cluster: Cluster;
  let server: Node;
  let url: string;
  let schema: Awaited<ReturnType<typeof freshSchema>> | undefined;
  let dataDir: string | undefined;

  before(async () => {
    ensureBuilt();
    sinks = await startSinks({ smtpUser: 'herald-mailer', smtpPassword: SMTP_PASSWORD });
    schema = onPostgres ? await freshSchema() : undefined;
    dataDir = schema ? undefined : mkdtempSync(path.join(tmpdir(), 'herald-secrets-'));
    cluster = new Cluster({
      ...(schema ? { DATABASE_URL: schema.url } : { HERALD_DATA_DIR: dataDir! }),
      HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
      // The most talkative level an operator would turn on while troubleshooting.
      LOG_LEVEL: 'debug',
      HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true',
      HERALD_DELIVERY_RETRY_BASE_MS: '200',
      HERALD_DELIVERY_MAX_ATTEMPTS: '2',
      HERALD_WORKER_POLL_MS: '100',
      HERALD_IP_RATE_LIMIT: '100000',
      TELEGRAM_WEBHOOK_SECRET,
      ...sinks.env,
    });
    server = await cluster.start('all');
    url = server.url!;
  });

  after(async () => {
    await cluster?.stop().catch(() => {});
    await killStrays();
    await sinks?.close();
    await schema?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every secret and contact value out of the database, the logs and the API answers', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const needles: Needle[] = [
      { kind: 'credential', value: ADMIN_TOKEN },
      { kind: 'credential', value: SMTP_PASSWORD },
      { kind: 'credential', value: TELEGRAM_WEBHOOK_SECRET },
      { kind: 'credential', value: sinks.telegram.token },
      { kind: 'credential', value: sinks.twilio.authToken },
    ];
    const answers: Array<{ where: string; text: string }> = [];
    const api = async (method: string, route: string, body?: unknown, key?: string) => {
      const res = await call(url, key, method, route, body);
      answers.push({ where: `${method} ${route}`, text: JSON.stringify(res.body) });
      return res;
    };

    const protocol = await createProtocol(url, { tier: 3, name: 'Secrets' });
    const extra = await call(url, ADMIN_TOKEN, 'POST', `/v1/admin/protocols/${protocol.id}/keys`, { environment: 'production' });
    assert.equal(extra.status, 201, JSON.stringify(extra.body));
    needles.push({ kind: 'api key', value: protocol.apiKey }, { kind: 'api key', value: protocol.sandboxApiKey }, { kind: 'api key', value: extra.body.apiKey });
    const key = protocol.apiKey;
    const hook = await call(url, key, 'POST', '/v1/webhooks', { url: `${sinks.receiver.url}/secrets`, events: ['notification.delivered', 'notification.failed', 'notification.bounced'] });
    assert.equal(hook.status, 201);
    needles.push({ kind: 'webhook secret', value: hook.body.secret });
    await api('POST', `/v1/webhooks/${hook.body.id}/test`, undefined, key);

    // Imported identities: one delivers everywhere, one bounces, fails and is refused on every channel.
    const contact = (i: number) => ({ email: `Holder.${i}.${uniq()}@Secrets.Example`, phone: `+1415${String(5550000 + i * 37 + Number.parseInt(uniq(), 16) % 1000).padStart(7, '0')}`, telegramChatId: String(6_100_000_000 + i * 7 + Number.parseInt(uniq(), 16)) });
    const good = { wallet: makeWallet().address, ...contact(1) };
    const bad = { wallet: makeWallet().address, ...contact(2) };
    for (const c of [good, bad]) {
      await importIdentity(url, c.wallet, { email: c.email, phone: c.phone, telegramChatId: c.telegramChatId });
      needles.push({ kind: 'email', value: c.email }, { kind: 'phone', value: c.phone }, { kind: 'telegram chat id', value: c.telegramChatId });
    }
    sinks.smtp.script(good.email, { code: 451 }, 1);
    sinks.smtp.script(bad.email, { code: 550 }, 5);
    sinks.twilio.script({ kind: 'error', code: 21211 }, { to: bad.phone, times: 5 });
    sinks.telegram.script({ kind: 'chat-not-found' }, { chatId: bad.telegramChatId, times: 5 });

    // A self-registered identity: codes by email and SMS, a Telegram deep link.
    const self = newWallet();
    const selfContacts = { email: `self.${uniq()}@secrets.example`, phone: `+1628${String(5550000 + (Number.parseInt(uniq(), 16) % 9000)).padStart(7, '0')}` };
    const chat = 6_900_000_000 + (Number.parseInt(uniq(), 16) % 1_000_000);
    needles.push({ kind: 'email', value: selfContacts.email }, { kind: 'phone', value: selfContacts.phone }, { kind: 'telegram chat id', value: String(chat) });
    const gw = { url } as TestGateway;
    const registered = await register(gw, self, selfContacts);
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    const linkToken = new URL(registered.body.telegramLink).searchParams.get('start')!;
    needles.push({ kind: 'credential', value: linkToken });
    const codeFor = (channel: 'email' | 'sms') =>
      waitFor(async () => {
        const text =
          channel === 'email'
            ? sinks.smtp.received.find((m) => m.to.includes(selfContacts.email))?.text
            : sinks.twilio.received.find((r) => r.form.To === selfContacts.phone)?.form.Body;
        return text ? /\b(\d{6})\b/.exec(text)?.[1] : undefined;
      }, 15_000);
    for (const channel of ['email', 'sms'] as const) {
      const code = await codeFor(channel);
      needles.push({ kind: 'credential', value: code });
      assert.equal((await api('POST', '/v1/identities/verify', { wallet: self.address, channel, code })).status, 200);
    }
    const linked = await call(url, undefined, 'POST', '/v1/telegram/webhook', { update_id: 1, message: { message_id: 1, date: 0, chat: { id: chat, type: 'private' }, from: { id: chat, is_bot: false, first_name: 'S' }, text: `/start ${linkToken}` } }, { 'x-telegram-bot-api-secret-token': TELEGRAM_WEBHOOK_SECRET });
    assert.equal(linked.status, 200, JSON.stringify(linked.body));

    const ids: string[] = [];
    for (const wallet of [good.wallet, bad.wallet, self.address]) {
      for (const channel of ['email', 'telegram', 'sms']) {
        const res = await api('POST', '/v1/notify', { wallet, subject: 'Your position', body: 'Health factor **1.1**', category: 'defi', preferredChannel: channel, priority: channel === 'email' ? 'critical' : 'normal' }, key);
        assert.equal(res.status, 202, JSON.stringify(res.body));
        ids.push(res.body.notificationId);
      }
    }
    await api('POST', '/v1/subscriptions', { walletAddress: good.wallet, channels: ['email', 'sms'] }, key);
    await api('POST', '/v1/notify', { wallet: good.wallet, subject: 'Sandbox', body: 'Captured', category: 'system' }, protocol.sandboxApiKey);

    const final = await waitFor(
      async () => {
        const records = await Promise.all(ids.map(async (id) => (await api('GET', `/v1/notifications/${id}`, undefined, key)).body));
        return records.every((r) => ['delivered', 'bounced', 'failed'].includes(r.status)) ? records : undefined;
      },
      60_000,
      250,
    );
    for (const route of ['/v1/notifications?limit=100', '/v1/sandbox/messages', `/v1/webhooks/${hook.body.id}/deliveries`, '/v1/requests', '/v1/audience', `/v1/wallets/${self.address}/status`]) {
      await api('GET', route, undefined, key);
    }
    await api('GET', `/v1/admin/protocols/${protocol.id}/keys`, undefined, ADMIN_TOKEN);
    await server.current.stop('SIGTERM');

    const dump = schema
      ? await (async () => {
          const client = new pg.Client({ connectionString: schema!.url });
          await client.connect();
          try {
            return await dumpSchema(async (sql) => (await client.query(sql)).rows);
          } finally {
            await client.end();
          }
        })()
      : await (async () => {
          const db = new PGlite(path.join(dataDir!, 'pgdata'));
          try {
            return await dumpSchema(async (sql) => (await db.query<Record<string, any>>(sql)).rows);
          } finally {
            await db.close();
          }
        })();
    const logs = cluster.instances.map((p) => ({ where: `process ${p.pid} output`, text: `${p.stdout()}\n${p.stderr()}` }));
    const leaks = {
      database: findLeaks(dump, needles),
      logs: findLeaks(logs, needles),
      api: findLeaks(answers, needles),
    };
    t.diagnostic(
      `secrets figures: ${JSON.stringify({
        values: needles.length,
        databaseValuesScanned: dump.length,
        tablesScanned: new Set(dump.map((d) => d.where.split('.')[0])).size,
        logBytes: logs.reduce((n, l) => n + l.text.length, 0),
        apiAnswers: answers.length,
        outcomes: final.map((r: any) => r.status),
        leaks: { database: leaks.database.length, logs: leaks.logs.length, api: leaks.api.length },
      })}`,
    );
    // The scan finds the values where they belong: at the providers, which must receive them.
    const providerSide = [
      { where: 'smtp', text: JSON.stringify(sinks.smtp.received.map((m) => m.to)) },
      { where: 'twilio', text: JSON.stringify(sinks.twilio.received.map((r) => r.form.To)) },
      { where: 'telegram', text: JSON.stringify(sinks.telegram.received.map((r) => String(r.body.chat_id))) },
    ];
    const delivered = [good.email, good.phone, good.telegramChatId, selfContacts.email, selfContacts.phone, String(chat)];
    const found = new Set(findLeaks(providerSide, needles).map((l) => l.value));
    assert.deepEqual(delivered.filter((v) => !found.has(v)), [], 'the scan recognises each delivered contact value at its provider');
    assert.ok(final.some((r: any) => r.status === 'bounced' || r.attempts.some((a: any) => a.outcome === 'bounced')), 'a bounce echoed an address');
    assert.ok(final.some((r: any) => r.status === 'failed'), 'a provider refused a number or chat');
    assert.deepEqual(leaks, { database: [], logs: [], api: [] });
  });
});
