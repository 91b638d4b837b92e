/**
 * Starts a real Herald gateway inside the benchmark's process: PGlite in memory, or a fresh schema
 * on PostgreSQL (optionally with Redis for the rate limiter), and creates protocols through the
 * admin API exactly as an operator would.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../packages/server/dist/config.js';
import { startHerald, type Herald, type StartOptions } from '../../packages/server/dist/runtime.js';

export type Engine = 'pglite' | 'postgres' | 'postgres+redis';
export const ENGINES: readonly Engine[] = ['pglite', 'postgres', 'postgres+redis'];

export const ENGINE_LABELS: Record<Engine, string> = {
  pglite: 'PGlite (in memory)',
  postgres: 'PostgreSQL',
  'postgres+redis': 'PostgreSQL + Redis rate limiter',
};

export const ADMIN_TOKEN = `bench-admin-${randomBytes(8).toString('hex')}`;

export interface BenchGateway {
  engine: Engine;
  url: string;
  herald: Herald;
  createProtocol(options?: { tier?: number; overageEnabled?: boolean; name?: string }): Promise<BenchProtocol>;
  close(): Promise<void>;
}

export interface BenchProtocol {
  id: string;
  apiKey: string;
  sandboxApiKey: string;
}

export const databaseUrl = () => process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const redisUrl = () => process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function adminQuery(base: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh schema, so a benchmark never sees (or leaves) rows of another run. */
async function freshSchema(base: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(base, `CREATE SCHEMA ${schema}`);
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), drop: () => adminQuery(base, `DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
}

export async function startBenchGateway(engine: Engine, extraEnv: Record<string, string> = {}, start: StartOptions = {}): Promise<BenchGateway> {
  const schema = engine === 'pglite' ? undefined : await freshSchema(databaseUrl());
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
    HERALD_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    // Only the set-up traffic (admin calls) is limited per IP; keyed requests never are.
    HERALD_IP_RATE_LIMIT: '100000',
    ...(schema ? { DATABASE_URL: schema.url } : { HERALD_DATA_DIR: 'memory://' }),
    ...(engine === 'postgres+redis' ? { REDIS_URL: redisUrl(), HERALD_REDIS_PREFIX: `bench${randomBytes(4).toString('hex')}:` } : {}),
    ...extraEnv,
  };
  let herald: Herald;
  try {
    herald = await startHerald(loadConfig(env), { announce: () => {}, ...start });
  } catch (error) {
    await schema?.drop();
    throw error;
  }
  // The gateway's Redis client connects in the background; requests sent before it is ready would
  // use the per-process fallback counter (and log the switch).
  if (engine === 'postgres+redis') await new Promise((resolve) => setTimeout(resolve, 500));
  const url = herald.url!;
  return {
    engine,
    url,
    herald,
    createProtocol: (options) => createProtocol(url, options),
    async close() {
      await herald.close();
      await schema?.drop();
    },
  };
}

async function createProtocol(
  url: string,
  { tier = 3, overageEnabled = true, name = 'Bench protocol' }: { tier?: number; overageEnabled?: boolean; name?: string } = {},
): Promise<BenchProtocol> {
  const res = await fetch(`${url}/v1/admin/protocols`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, tier, overageEnabled }),
  });
  if (res.status !== 201) throw new Error(`creating a protocol failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as BenchProtocol;
}

/**
 * Enough Enterprise protocols (overage on) that the 500 requests/s tier limit cannot cap the
 * figure: load spread evenly over `count` keys stays under the limit up to count × 500 requests/s.
 */
export async function createEnterpriseProtocols(gateway: BenchGateway, count: number): Promise<BenchProtocol[]> {
  const protocols: BenchProtocol[] = [];
  for (let i = 0; i < count; i++) protocols.push(await gateway.createProtocol({ tier: 3, overageEnabled: true, name: `Bench ${i + 1}` }));
  return protocols;
}
