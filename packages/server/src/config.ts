import path from 'node:path';

/** The only reader of process.env: every setting the gateway has, validated once at start-up. */
export interface Config {
  port: number;
  host: string;
  role: 'all' | 'api' | 'worker';
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
  requestLogFlushMs: number;
  shutdownTimeoutMs: number;
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

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
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

function url(env: Env, name: string, protocols: string[]): string | undefined {
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

function encryptionKey(env: Env): Buffer | undefined {
  const raw = env.HERALD_ENCRYPTION_KEY;
  if (raw === undefined || raw === '') return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    throw new ConfigError('HERALD_ENCRYPTION_KEY', 'must be 32 bytes, as 64 hex characters or base64');
  }
  return key;
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
  return {
    port,
    host: env.HOST || '0.0.0.0',
    role: oneOf(env, 'HERALD_ROLE', ['all', 'api', 'worker'] as const, 'all'),
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
    requestLogFlushMs: integer(env, 'HERALD_REQUEST_LOG_FLUSH_MS', 250, 10, 60_000),
    shutdownTimeoutMs: integer(env, 'HERALD_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
  };
}
