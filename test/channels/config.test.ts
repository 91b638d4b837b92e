import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { buildLiveProviders } from '../../packages/server/src/channels/build-providers.js';
import { ConfigError, loadConfig } from '../../packages/server/src/config.js';
import { startGateway } from '../support/gateway.js';
import { logLines } from '../support/log-lines.js';

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const TWILIO = { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'secret-token', TWILIO_FROM: '+15005550006' };

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail('loadConfig accepted ' + JSON.stringify(env));
}

function quietLog(log = logLines()) {
  return pino({ level: 'info' }, log.stream);
}

describe('channel provider settings', () => {
  it('has defaults that keep every channel on capture', () => {
    const config = loadConfig({});
    assert.equal(config.smtpUrl, undefined);
    assert.equal(config.emailFrom, 'Herald <notifications@herald.local>');
    assert.equal(config.telegramBotToken, undefined);
    assert.equal(config.telegramApiUrl, 'https://api.telegram.org');
    assert.equal(config.telegramRateLimit, 30);
    assert.equal(config.twilioAccountSid, undefined);
    assert.equal(config.twilioApiUrl, 'https://api.twilio.com');
    assert.deepEqual(buildLiveProviders(config, quietLog()), {});
  });

  it('reads every setting', () => {
    const config = loadConfig({
      SMTP_URL: 'smtps://user:pa%40ss@smtp.example.com:465',
      EMAIL_FROM: 'Acme Alerts <alerts@acme.example>',
      TELEGRAM_BOT_TOKEN: '123456:ABC-def_ghi',
      TELEGRAM_API_URL: 'http://127.0.0.1:8081/',
      TELEGRAM_RATE_LIMIT: '10',
      ...TWILIO,
      TWILIO_API_URL: 'http://127.0.0.1:8082',
    });
    assert.equal(config.smtpUrl, 'smtps://user:pa%40ss@smtp.example.com:465');
    assert.equal(config.emailFrom, 'Acme Alerts <alerts@acme.example>');
    assert.equal(config.telegramBotToken, '123456:ABC-def_ghi');
    assert.equal(config.telegramApiUrl, 'http://127.0.0.1:8081');
    assert.equal(config.telegramRateLimit, 10);
    assert.equal(config.twilioAccountSid, SID);
    assert.equal(config.twilioAuthToken, 'secret-token');
    assert.equal(config.twilioFrom, '+15005550006');
    assert.equal(config.twilioApiUrl, 'http://127.0.0.1:8082');
    assert.equal(loadConfig({ EMAIL_FROM: 'plain@acme.example' }).emailFrom, 'plain@acme.example');
    // International name and domain: sent encoded and in ASCII form (the local part cannot be).
    assert.equal(loadConfig({ EMAIL_FROM: 'Hérald Ops <alerts@bücher.example>' }).emailFrom, 'Hérald Ops <alerts@bücher.example>');
    assert.equal(loadConfig({ ...TWILIO, TWILIO_FROM: `MG${'ab'.repeat(16)}` }).twilioFrom, `MG${'ab'.repeat(16)}`);
  });

  it('refuses malformed settings, naming the variable and never echoing a secret', () => {
    const cases: [Record<string, string>, string][] = [
      [{ SMTP_URL: 'http://smtp.example.com' }, 'SMTP_URL'],
      [{ SMTP_URL: 'not a url' }, 'SMTP_URL'],
      [{ EMAIL_FROM: 'Herald <not-an-address>' }, 'EMAIL_FROM'],
      [{ EMAIL_FROM: 'two words@x.y' }, 'EMAIL_FROM'],
      [{ EMAIL_FROM: 'Ops <nötify@example.org>' }, 'EMAIL_FROM'],
      [{ TELEGRAM_BOT_TOKEN: 'no-colon-secret' }, 'TELEGRAM_BOT_TOKEN'],
      [{ TELEGRAM_API_URL: 'ftp://api.telegram.org' }, 'TELEGRAM_API_URL'],
      [{ TELEGRAM_RATE_LIMIT: '2.5' }, 'TELEGRAM_RATE_LIMIT'],
      [{ TELEGRAM_RATE_LIMIT: '0' }, 'TELEGRAM_RATE_LIMIT'],
      [{ ...TWILIO, TWILIO_ACCOUNT_SID: 'AC123' }, 'TWILIO_ACCOUNT_SID'],
      [{ ...TWILIO, TWILIO_FROM: '5551234' }, 'TWILIO_FROM'],
      [{ ...TWILIO, TWILIO_FROM: 'MGshort' }, 'TWILIO_FROM'],
      [{ TWILIO_API_URL: 'twilio.com' }, 'TWILIO_API_URL'],
    ];
    for (const [env, variable] of cases) {
      const error = configError(env);
      assert.equal(error.variable, variable, JSON.stringify(env));
      assert.doesNotMatch(error.message, /no-colon-secret|secret-token/);
    }
  });

  it('refuses a partial Twilio configuration, naming what is missing', () => {
    const missingFrom = configError({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 'secret-token' });
    assert.equal(missingFrom.variable, 'TWILIO_FROM');
    assert.match(missingFrom.message, /TWILIO_FROM is required when TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are set/);
    assert.equal(configError({ TWILIO_FROM: '+15005550006' }).variable, 'TWILIO_ACCOUNT_SID');
    assert.equal(configError({ TWILIO_ACCOUNT_SID: SID, TWILIO_FROM: '+15005550006' }).variable, 'TWILIO_AUTH_TOKEN');
  });

  it('builds a provider per configured channel and logs hosts, never credentials', async () => {
    const log = logLines();
    const config = loadConfig({ SMTP_URL: 'smtp://user:hunter2@smtp.example.com:2525', TELEGRAM_BOT_TOKEN: '123456:TOKENVALUE', ...TWILIO });
    const live = buildLiveProviders(config, quietLog(log));
    assert.deepEqual(
      Object.fromEntries(Object.entries(live).map(([channel, provider]) => [channel, provider.name])),
      { email: 'smtp', telegram: 'telegram', sms: 'twilio' },
    );
    const logged = log.lines.join('');
    assert.match(logged, /smtp\.example\.com:2525/);
    assert.doesNotMatch(logged, /hunter2|TOKENVALUE|secret-token/);
    await live.email!.close!();

    assert.deepEqual(Object.keys(buildLiveProviders(loadConfig({ TELEGRAM_BOT_TOKEN: '1:x' }), quietLog())), ['telegram']);
  });
});

describe('start-up warning about the links of real email', () => {
  /** The warnings a gateway logs while starting with `env`. */
  async function startUpWarnings(env: Record<string, string>): Promise<{ msg: string; publicUrl?: string }[]> {
    const log = logLines();
    const gateway = await startGateway({ env: { SMTP_URL: 'smtp://127.0.0.1:2525', ...env }, logger: pino({ level: 'warn' }, log.stream) });
    await gateway.close();
    return log.records().filter((line) => line.level === 40) as { msg: string; publicUrl?: string }[];
  }
  const aboutLinks = (warning: { msg: string }) => /^SMTP_URL is set but HERALD_PUBLIC_URL is not an https:\/\/ address/.test(warning.msg);

  it('warns when a process that sends email has no https:// public URL, and only then', async () => {
    const plain = (await startUpWarnings({})).filter(aboutLinks);
    assert.equal(plain.length, 1);
    assert.match(plain[0].publicUrl!, /^http:\/\/localhost:/);
    assert.deepEqual((await startUpWarnings({ HERALD_PUBLIC_URL: 'https://herald.example.com' })).filter(aboutLinks), []);
    // The API role sends no email (a worker does).
    assert.deepEqual((await startUpWarnings({ HERALD_ROLE: 'api' })).filter(aboutLinks), []);
  });
});
