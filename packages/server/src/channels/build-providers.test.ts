import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../config.js';
import { logLines } from '../../../../test/support/log-lines.js';
import { buildLiveProviders } from './build-providers.js';
import { ehloName } from './email.js';

/** The warnings buildLiveProviders logs for an environment. */
function warningsFor(env: Record<string, string>): { msg: string; captured?: string[] }[] {
  const log = logLines();
  buildLiveProviders(loadConfig(env), pino({ level: 'info' }, log.stream));
  return log.records().filter((line) => line.level === 40) as { msg: string; captured?: string[] }[];
}

const POSTGRES = { DATABASE_URL: 'postgres://herald@db.internal:5432/herald', HERALD_ENCRYPTION_KEY: 'ab'.repeat(32) };

describe('buildLiveProviders', () => {
  it('warns when a process that sends on PostgreSQL leaves channels on capture, naming them', () => {
    for (const role of ['worker', 'all']) {
      const [warning, ...more] = warningsFor({ ...POSTGRES, HERALD_ROLE: role, SMTP_URL: 'smtp://mail.internal:587?name=herald.example.com' });
      assert.deepEqual(warning.captured, ['telegram', 'sms'], role);
      assert.match(warning.msg, /^telegram, sms: no provider configured, so this process captures their messages \(live keys' too\) instead of delivering them/);
      assert.equal(more.length, 0);
    }
  });

  it('stays quiet on the embedded database, in the api role, and with every provider set', () => {
    assert.deepEqual(warningsFor({ HERALD_DATA_DIR: 'memory://' }), []);
    assert.deepEqual(warningsFor({ ...POSTGRES, HERALD_ROLE: 'api' }), []);
    const all = {
      ...POSTGRES,
      HERALD_ROLE: 'worker',
      SMTP_URL: 'smtp://mail.internal:587?name=herald.example.com',
      TELEGRAM_BOT_TOKEN: '123456:ABCdef',
      TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: 'f'.repeat(32),
      TWILIO_FROM: '+14155550100',
    };
    assert.deepEqual(warningsFor(all), []);
  });
});

describe('the EHLO name', () => {
  it("is the URL's ?name=, else a fully qualified host name, else [127.0.0.1]", () => {
    assert.equal(ehloName('smtp://mail.internal:587?name=herald.example.com', 'vm'), 'herald.example.com');
    assert.equal(ehloName('smtp://mail.internal:587', 'sender.example.com'), 'sender.example.com');
    assert.equal(ehloName('smtp://mail.internal:587', 'vm'), '[127.0.0.1]');
  });

  it('is warned about when it would be [127.0.0.1], in every role (API processes send verification codes)', () => {
    const loopback = ehloName('smtp://mail.internal:587') === '[127.0.0.1]';
    const about = (warnings: { msg: string }[]) => warnings.filter((w) => /greets SMTP servers as \[127\.0\.0\.1\]; add \?name=/.test(w.msg)).length;
    assert.equal(about(warningsFor({ SMTP_URL: 'smtp://mail.internal:587' })), loopback ? 1 : 0);
    assert.equal(about(warningsFor({ SMTP_URL: 'smtp://mail.internal:587?name=herald.example.com' })), 0);
    assert.equal(about(warningsFor({ ...POSTGRES, HERALD_ROLE: 'api', SMTP_URL: 'smtp://mail.internal:587' })), loopback ? 1 : 0);
  });
});

describe('the Telegram linking warnings', () => {
  const about = (warnings: { msg: string }[], pattern: RegExp) => warnings.filter((w) => pattern.test(w.msg)).length;
  const NO_ROUTE = /^TELEGRAM_BOT_TOKEN is set but TELEGRAM_WEBHOOK_SECRET is not: POST \/v1\/telegram\/webhook does not exist/;
  const DEFAULT_BOT = /^TELEGRAM_BOT_USERNAME is not set: registration links point to the default @HeraldNotifyBot/;
  const TOKEN = { TELEGRAM_BOT_TOKEN: '123456:ABCdef' };

  it('warns a process that serves registration when its links cannot link a chat, or name a bot that may not be its own', () => {
    const bare = warningsFor(TOKEN);
    assert.deepEqual([about(bare, NO_ROUTE), about(bare, DEFAULT_BOT)], [1, 1]);
    const set = warningsFor({ ...TOKEN, TELEGRAM_WEBHOOK_SECRET: 's'.repeat(16), TELEGRAM_BOT_USERNAME: 'AcmeAlertsBot' });
    assert.deepEqual([about(set, NO_ROUTE), about(set, DEFAULT_BOT)], [0, 0]);
  });

  it('stays quiet without a bot token, and in the worker role, which serves no registration', () => {
    const none = warningsFor({});
    assert.deepEqual([about(none, NO_ROUTE), about(none, DEFAULT_BOT)], [0, 0]);
    const worker = warningsFor({ ...POSTGRES, HERALD_ROLE: 'worker', ...TOKEN });
    assert.deepEqual([about(worker, NO_ROUTE), about(worker, DEFAULT_BOT)], [0, 0]);
  });
});
