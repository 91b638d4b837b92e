import type { Logger } from 'pino';
import { DEFAULT_TELEGRAM_BOT_USERNAME, type Config } from '../config.js';
import { ehloName, SmtpProvider } from './email.js';
import type { Channel, ChannelProvider } from './provider.js';
import { TwilioProvider } from './sms.js';
import { TelegramProvider } from './telegram.js';

/** The real provider of each channel whose settings are present; the others stay on capture. */
export function buildLiveProviders(config: Config, log: Logger): Partial<Record<Channel, ChannelProvider>> {
  const live: Partial<Record<Channel, ChannelProvider>> = {};
  if (config.smtpUrl) {
    live.email = new SmtpProvider({ url: config.smtpUrl, from: config.emailFrom });
  }
  if (config.telegramBotToken) {
    live.telegram = new TelegramProvider({ token: config.telegramBotToken, apiUrl: config.telegramApiUrl, ratePerSecond: config.telegramRateLimit });
  }
  if (config.twilioAccountSid && config.twilioAuthToken && config.twilioFrom) {
    live.sms = new TwilioProvider({ accountSid: config.twilioAccountSid, authToken: config.twilioAuthToken, from: config.twilioFrom, apiUrl: config.twilioApiUrl });
  }
  // Hosts only: SMTP_URL carries credentials and the Telegram token is part of its URLs.
  log.info(
    {
      email: config.smtpUrl ? `smtp ${new URL(config.smtpUrl).host}` : 'capture',
      telegram: config.telegramBotToken ? `telegram ${new URL(config.telegramApiUrl).host}` : 'capture',
      sms: live.sms ? `twilio ${new URL(config.twilioApiUrl).host}` : 'capture',
    },
    'channel providers',
  );
  // On PostgreSQL a deployment sends for real: a channel left on capture there is most often a
  // worker started without the providers' settings, whose live sends would read as delivered.
  const captured = (['email', 'telegram', 'sms'] as const).filter((channel) => !live[channel]);
  if (config.databaseUrl && config.role !== 'api' && captured.length) {
    log.warn(
      { captured },
      `${captured.join(', ')}: no provider configured, so this process captures their messages (live keys' too) instead of delivering them; give every process the same provider settings`,
    );
  }
  // Receiving servers check the EHLO name against the connecting address; a loopback literal
  // from a public address scores as spam. API processes send email too (verification codes).
  if (config.smtpUrl && ehloName(config.smtpUrl) === '[127.0.0.1]') {
    log.warn(
      `SMTP_URL names no ?name= and this machine's host name is not fully qualified, so this process greets SMTP servers as [127.0.0.1]; add ?name=<this host's name> to SMTP_URL`,
    );
  }
  // Registration's Telegram links need the bot's updates to reach the gateway, and the bot's name.
  if (config.telegramBotToken && config.role !== 'worker') {
    if (!config.telegramWebhookSecret) {
      log.warn(
        'TELEGRAM_BOT_TOKEN is set but TELEGRAM_WEBHOOK_SECRET is not: POST /v1/telegram/webhook does not exist, so no /start of a registration link reaches this gateway and no chat gets linked; set it and register the webhook with Telegram',
      );
    }
    if (config.telegramBotUsername === DEFAULT_TELEGRAM_BOT_USERNAME) {
      log.warn(
        `TELEGRAM_BOT_USERNAME is not set: registration links point to the default @${DEFAULT_TELEGRAM_BOT_USERNAME}; set it to your bot's username unless that is your bot`,
      );
    }
  }
  return live;
}
