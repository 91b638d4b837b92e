import { statSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { receiptConfig, type ReceiptConfig } from './receipts/receipt-config.js';

/** What an admin token may hold, as HERALD_ADMIN_TOKEN or the embedded data dir's admin-token file. */
export const ADMIN_TOKEN_TEXT = /^[\x21-\x7e]+$/;

/** The bot named in registration's Telegram links when TELEGRAM_BOT_USERNAME is not set. */
export const DEFAULT_TELEGRAM_BOT_USERNAME = 'HeraldNotifyBot';

/** The only reader of process.env: every setting the gateway has, validated once at start-up. */
export interface Config {
  port: number;
  host: string;
  role: 'all' | 'api' | 'worker';
  /** The worker role's port for `GET /health` alone (unset: it listens on none). */
  healthPort: number | undefined;
  logLevel: string;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  redisPrefix: string;
  adminToken?: string;
  /** 32-byte AES key for secrets at rest; the embedded default generates one into the data dir. */
  encryptionKey?: Buffer;
  publicUrl: string;
  bodyLimitBytes: number;
  authCacheMs: number;
  ipRateLimit: number;
  /** Requests per second per client IP on an email's engagement links (open, click, unsubscribe). */
  linkRateLimit: number;
  /** Requests per second of the admin API, all callers with the operator token together. */
  adminRateLimit: number;
  /**
   * HERALD_TRUST_PROXY: the addresses and CIDR ranges of the proxies in front of the gateway, whose
   * `X-Forwarded-For` names the client for the per-IP limit. False (the default): the socket's
   * peer is the client.
   */
  trustProxy: false | string[];
  requestLogFlushMs: number;
  shutdownTimeoutMs: number;
  /**
   * HERALD_ALLOW_PRIVATE_WEBHOOKS (`true`/`false`): let webhook URLs reach private, loopback and
   * link-local addresses. Default: true when embedded (no DATABASE_URL, local development), false
   * with DATABASE_URL.
   */
  allowPrivateWebhooks: boolean;
  /** HERALD_WEBHOOK_TIMEOUT_MS: how long a receiver has to answer 2xx (default 15 000). */
  webhookTimeoutMs: number;
  delivery: {
    batchSize: number;
    /** Delivery passes running side by side in one worker process (they claim disjoint rows). */
    loops: number;
    leaseMs: number;
    concurrency: number;
    idleMs: number;
    retry: { maxAttempts: number; baseMs: number; maxMs: number };
  };
  /** The bot of the `https://t.me/<bot>?start=<token>` links that tie a wallet to a Telegram chat. */
  telegramBotUsername: string;
  /** Telegram's `X-Telegram-Bot-Api-Secret-Token`; without it the webhook route answers 404. */
  telegramWebhookSecret?: string;
  /** Email goes out over SMTP when set (`smtp://` or `smtps://`, credentials in the URL); capture otherwise. */
  smtpUrl?: string;
  /** From header of every email, `Name <address>` or a bare address. */
  emailFrom: string;
  /** Telegram goes out through the Bot API when set; capture otherwise. */
  telegramBotToken?: string;
  telegramApiUrl: string;
  /** Messages per second across this process, Telegram's documented bulk limit by default. */
  telegramRateLimit: number;
  /** SMS goes out through Twilio when all three are set; capture otherwise. */
  twilioAccountSid?: string;
  twilioAuthToken?: string;
  /** An E.164 sender number, or a Messaging Service SID (`MG…`). */
  twilioFrom?: string;
  twilioApiUrl: string;
  /** HERALD_DOCS_DIR: the markdown pages the MCP endpoint serves (default: the repository's docs/). */
  docsDir: string;
  /** HERALD_EXAMPLES_DIR: the integration examples the MCP endpoint serves (default: the repository's examples/). */
  examplesDir: string;
  /** On-chain receipts: SOLANA_RPC_URL, HERALD_RECEIPT_* and HERALD_SOLANA_CLUSTER (receipts/receipt-config.ts). */
  receipts: ReceiptConfig;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

type Env = Record<string, string | undefined>;

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

export function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

function matching(env: Env, name: string, pattern: RegExp, what: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!pattern.test(raw)) throw new ConfigError(name, `must be ${what}`);
  return raw;
}

function encryptionKey(env: Env): Buffer | undefined {
  const raw = env.HERALD_ENCRYPTION_KEY;
  if (raw === undefined || raw === '') return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    throw new ConfigError('HERALD_ENCRYPTION_KEY', 'must be 32 bytes, as 64 hex characters or base64');
  }
  return key;
}

const EMAIL_ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;

/** `Name <address>` or a bare address. */
function emailFrom(env: Env): string {
  const raw = env.EMAIL_FROM?.trim();
  if (!raw) return 'Herald <notifications@herald.local>';
  const address = /<([^<>]*)>$/.exec(raw)?.[1] ?? raw;
  if (!EMAIL_ADDRESS.test(address)) throw new ConfigError('EMAIL_FROM', 'must be an email address, optionally as "Name <address>"');
  // An internationalized domain is sent in its ASCII form; a local part has none, and would need
  // SMTPUTF8 from every server on the way.
  if (!/^[\x21-\x7e]+@/.test(address)) throw new ConfigError('EMAIL_FROM', 'must have an ASCII address before the @ (the name and the domain may be international)');
  return raw;
}

/** All three Twilio settings or none: a partial set would silently leave SMS on capture. */
function twilio(env: Env): { twilioAccountSid?: string; twilioAuthToken?: string; twilioFrom?: string } {
  const names = ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM'] as const;
  const set = names.filter((name) => env[name]);
  if (set.length === 0) return {};
  const missing = names.find((name) => !env[name]);
  if (missing) throw new ConfigError(missing, `is required when ${set.join(' and ')} ${set.length > 1 ? 'are' : 'is'} set`);
  return {
    twilioAccountSid: matching(env, 'TWILIO_ACCOUNT_SID', /^AC[0-9a-fA-F]{32}$/, '"AC" followed by 32 hexadecimal characters'),
    twilioAuthToken: env.TWILIO_AUTH_TOKEN,
    twilioFrom: matching(env, 'TWILIO_FROM', /^(?:\+[1-9]\d{6,14}|MG[0-9a-fA-F]{32})$/, 'an E.164 number (+15551234567) or a Messaging Service SID (MG…)'),
  };
}

function baseUrl(env: Env, name: string, fallback: string): string {
  return (url(env, name, ['http:', 'https:']) ?? fallback).replace(/\/+$/, '');
}

function trustProxy(env: Env): false | string[] {
  const raw = env.HERALD_TRUST_PROXY?.trim();
  if (!raw || raw === 'false') return false;
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits))) {
      // A count of proxies is not taken: it would trust whoever connects, a client reaching the
      // gateway without the proxy included.
      throw new ConfigError('HERALD_TRUST_PROXY', `must be the addresses or CIDR ranges of the proxies in front of the gateway, comma-separated; "${entry}" is not one`);
    }
  }
  return entries;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(name, `must be true or false, got "${raw}"`);
  return raw === 'true';
}

/** A directory given by the operator must exist; the repository's own (the default) is taken as it is. */
function existingDirectory(env: Env, name: string, fallback: URL): string {
  const raw = env[name];
  if (!raw) return path.resolve(fileURLToPath(fallback));
  const resolved = path.resolve(raw);
  if (!statSync(resolved, { throwIfNoEntry: false })?.isDirectory()) throw new ConfigError(name, `must be an existing directory, got "${raw}"`);
  return resolved;
}

/** `memory://` keeps everything in memory (throwaway runs and tests); anything else is a directory. */
function dataDir(raw: string | undefined): string {
  if (raw === 'memory://') return raw;
  return path.resolve(raw || './.herald');
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const key = encryptionKey(env);
  if (databaseUrl && !key) {
    throw new ConfigError(
      'HERALD_ENCRYPTION_KEY',
      'is required with DATABASE_URL (every process must share it); generate one with `openssl rand -hex 32`',
    );
  }
  const adminToken = env.HERALD_ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('HERALD_ADMIN_TOKEN', 'must be at least 16 characters');
  }
  // It travels as `Authorization: Bearer <token>`: no whitespace, and only ASCII, which every
  // client sends as the same bytes (others send UTF-8 or Latin-1, and one of them would not match).
  if (adminToken !== undefined && !ADMIN_TOKEN_TEXT.test(adminToken)) {
    throw new ConfigError('HERALD_ADMIN_TOKEN', 'must be printable ASCII without whitespace (it travels in an HTTP header)');
  }
  return {
    port,
    host: env.HOST || '0.0.0.0',
    role: oneOf(env, 'HERALD_ROLE', ['all', 'api', 'worker'] as const, 'all'),
    healthPort: env.HERALD_HEALTH_PORT ? integer(env, 'HERALD_HEALTH_PORT', 0, 0, 65535) : undefined,
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    dataDir: dataDir(env.HERALD_DATA_DIR),
    databaseUrl,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: env.HERALD_REDIS_PREFIX || 'herald:',
    adminToken,
    encryptionKey: key,
    publicUrl: (url(env, 'HERALD_PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    bodyLimitBytes: integer(env, 'HERALD_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    authCacheMs: integer(env, 'HERALD_AUTH_CACHE_MS', 5000, 0, 600_000),
    ipRateLimit: integer(env, 'HERALD_IP_RATE_LIMIT', 20, 1, 100_000),
    linkRateLimit: integer(env, 'HERALD_LINK_RATE_LIMIT', 1000, 1, 1_000_000),
    adminRateLimit: integer(env, 'HERALD_ADMIN_RATE_LIMIT', 1000, 1, 1_000_000),
    trustProxy: trustProxy(env),
    requestLogFlushMs: integer(env, 'HERALD_REQUEST_LOG_FLUSH_MS', 250, 10, 60_000),
    shutdownTimeoutMs: integer(env, 'HERALD_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    allowPrivateWebhooks: boolean(env, 'HERALD_ALLOW_PRIVATE_WEBHOOKS', !databaseUrl),
    webhookTimeoutMs: integer(env, 'HERALD_WEBHOOK_TIMEOUT_MS', 15_000, 100, 60_000),
    delivery: {
      batchSize: integer(env, 'HERALD_WORKER_BATCH', 200, 1, 5000),
      loops: integer(env, 'HERALD_WORKER_LOOPS', 2, 1, 32),
      leaseMs: integer(env, 'HERALD_DELIVERY_LEASE_MS', 120_000, 1000, 3_600_000),
      concurrency: integer(env, 'HERALD_WORKER_CONCURRENCY', 50, 1, 1000),
      idleMs: integer(env, 'HERALD_WORKER_POLL_MS', 1000, 10, 60_000),
      retry: {
        maxAttempts: integer(env, 'HERALD_DELIVERY_MAX_ATTEMPTS', 8, 1, 50),
        baseMs: integer(env, 'HERALD_DELIVERY_RETRY_BASE_MS', 30_000, 1, 3_600_000),
        maxMs: 3_600_000,
      },
    },
    telegramBotUsername: matching(env, 'TELEGRAM_BOT_USERNAME', /^[A-Za-z][A-Za-z0-9_]{4,31}$/, 'a Telegram bot username') ?? DEFAULT_TELEGRAM_BOT_USERNAME,
    // Telegram takes 1-256 characters; a short one could be guessed, as for HERALD_ADMIN_TOKEN.
    telegramWebhookSecret: matching(env, 'TELEGRAM_WEBHOOK_SECRET', /^[A-Za-z0-9_-]{16,256}$/, '16-256 characters of A-Z, a-z, 0-9, _ and -'),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    emailFrom: emailFrom(env),
    telegramBotToken: matching(env, 'TELEGRAM_BOT_TOKEN', /^\d+:[A-Za-z0-9_-]+$/, 'a bot token as BotFather gives it (<digits>:<characters>)'),
    telegramApiUrl: baseUrl(env, 'TELEGRAM_API_URL', 'https://api.telegram.org'),
    telegramRateLimit: integer(env, 'TELEGRAM_RATE_LIMIT', 30, 1, 10_000),
    ...twilio(env),
    twilioApiUrl: baseUrl(env, 'TWILIO_API_URL', 'https://api.twilio.com'),
    // src/config.ts and dist/config.js sit at the same depth, so both resolve to the repository root.
    docsDir: existingDirectory(env, 'HERALD_DOCS_DIR', new URL('../../../docs/', import.meta.url)),
    examplesDir: existingDirectory(env, 'HERALD_EXAMPLES_DIR', new URL('../../../examples/', import.meta.url)),
    receipts: receiptConfig(env),
  };
}
