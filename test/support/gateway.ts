/**
 * Starts a real Herald gateway for a test: PGlite in memory by default; a fresh PostgreSQL schema
 * when DATABASE_URL is set; Redis counters (with a private key prefix) when REDIS_URL is set.
 * Requests go over real HTTP to the listening server.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../packages/server/src/config.js';
import { startHerald, type Herald } from '../../packages/server/src/runtime.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const ENCRYPTION_KEY = 'a'.repeat(64);

export interface TestGateway {
  url: string;
  herald: Herald;
  /** The DATABASE_URL this gateway uses (PostgreSQL runs only). */
  databaseUrl?: string;
  env: Record<string, string>;
  createProtocol(options?: { tier?: number; overageEnabled?: boolean; name?: string }): Promise<TestProtocol>;
  close(): Promise<void>;
}

export interface TestProtocol {
  id: string;
  apiKey: string;
  sandboxApiKey: string;
}

export const onPostgres = Boolean(process.env.DATABASE_URL);

/** A fresh schema in the shared test database; dropped by the returned function. */
export async function freshSchema(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL!;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    },
  };
}

export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    HERALD_DATA_DIR: 'memory://',
    HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
    HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, HERALD_REDIS_PREFIX: `t${randomBytes(4).toString('hex')}:` } : {}),
    ...extra,
  };
}

export async function startGateway(
  options: { env?: Record<string, string>; logger?: pino.Logger; now?: () => Date } = {},
): Promise<TestGateway> {
  const schema = onPostgres ? await freshSchema() : undefined;
  const env = testEnv({ ...(schema ? { DATABASE_URL: schema.url } : {}), ...options.env });
  const herald = await startHerald(loadConfig(env), { logger: options.logger, now: options.now, announce: () => {} });
  const url = herald.url!;
  return {
    url,
    herald,
    databaseUrl: schema?.url,
    env,
    createProtocol: (opts = {}) => createProtocol(url, opts),
    async close() {
      await herald.close();
      await schema?.drop();
    },
  };
}

export async function createProtocol(
  url: string,
  { tier = 3, overageEnabled = false, name = 'Test protocol' }: { tier?: number; overageEnabled?: boolean; name?: string } = {},
): Promise<TestProtocol> {
  const res = await fetch(`${url}/v1/admin/protocols`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, tier, overageEnabled }),
  });
  if (res.status !== 201) throw new Error(`creating a protocol failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as TestProtocol;
}

/** fetch with a bearer key and JSON in and out. */
export async function call(
  url: string,
  key: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Asserts the contract's error shape and returns the body. */
export function isErrorBody(body: any): boolean {
  return (
    body !== null &&
    typeof body === 'object' &&
    Number.isInteger(body.statusCode) &&
    typeof body.error === 'string' &&
    typeof body.message === 'string' &&
    typeof body.code === 'string' &&
    Object.keys(body).length === 4
  );
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for the start of the next wall-clock second, so rate-limit windows are predictable. */
export async function atNextSecond(): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + 5);
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 10_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}
