/**
 * Serverless function: a fetch-style handler (Request in, Response out) that sends one notification
 * per invocation, for Cloudflare Workers, Vercel or Netlify functions, Deno Deploy or Bun.
 *
 * - No long-lived state: the client is built on first use and cached at module level, where warm
 *   invocations reuse it (it holds settings only, no connections of its own).
 * - It answers as soon as the gateway accepted the send (202 with the notification id) and does not
 *   wait for delivery: follow the id with GET /v1/notifications/:id or a webhook (webhook.ts).
 * - The caller's `Idempotency-Key` header becomes the send's `idempotencyKey`, so a platform or
 *   client that retries the invocation does not notify twice.
 * - One retry and a 10 s timeout per attempt keep an invocation inside typical platform limits.
 * - Herald's answers are translated for the caller: its input errors pass through (400, 404 for an
 *   unregistered wallet, 409), a bad API key is the function's own misconfiguration (500), and a
 *   rate limit or exhausted quota means "try later" (503).
 *
 * Deploy: export `default` (Workers: `{ fetch }`), or wrap `handler` in your platform's adapter.
 * Settings: HERALD_API_KEY, HERALD_BASE_URL (from the platform's env bindings or process.env).
 * Try it locally: HERALD_API_KEY=… HERALD_BASE_URL=… HERALD_WALLET=<address> node --import tsx examples/serverless.ts
 * invokes the handler once with a sample request, prints the response and exits 0 on a 202. The
 * sample request's `Idempotency-Key` is new on every run; set IDEMPOTENCY_KEY to the same value for
 * two runs to see the second answered `duplicate` with the first one's notification id.
 */
import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Herald, HeraldApiError, HeraldNetworkError, type Category } from '@herald/sdk';

export interface Env {
  HERALD_API_KEY?: string;
  HERALD_BASE_URL?: string;
}

const CATEGORIES: Category[] = ['defi', 'governance', 'system', 'marketing', 'security'];

let cached: { settings: string; client: Herald } | undefined;

/** One client per set of settings, reused across warm invocations. */
function heraldFor(env: Env): Herald {
  const settings = `${env.HERALD_BASE_URL ?? ''} ${env.HERALD_API_KEY}`;
  if (cached?.settings !== settings) {
    cached = { settings, client: new Herald({ apiKey: env.HERALD_API_KEY, baseUrl: env.HERALD_BASE_URL, maxRetries: 1, timeoutMs: 10_000 }) };
  }
  return cached.client;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

interface SendRequest {
  wallet: string;
  subject: string;
  body: string;
  category: Category;
}

/** The request body, or what is wrong with it. */
function parseInput(input: unknown): SendRequest | string {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return 'The body must be a JSON object';
  const { wallet, subject, body, category = 'system' } = input as Record<string, unknown>;
  for (const [name, value] of Object.entries({ wallet, subject, body })) {
    if (typeof value !== 'string' || value === '') return `${name} must be a non-empty string`;
  }
  if (!CATEGORIES.includes(category as Category)) return `category must be one of ${CATEGORIES.join(', ')}`;
  return { wallet, subject, body, category } as SendRequest;
}

/** POST `{wallet, subject, body, category?}` → 202 `{notificationId, status, deliveryChannel}`. */
export async function handler(request: Request, env: Env = globalThis.process?.env ?? {}): Promise<Response> {
  if (request.method !== 'POST') return json(405, { error: 'Use POST' }, { allow: 'POST' });
  if (!env.HERALD_API_KEY) return json(500, { error: 'HERALD_API_KEY is not configured' });
  let input: unknown;
  try {
    input = await request.json();
  } catch {
    return json(400, { error: 'The body must be JSON' });
  }
  const parsed = parseInput(input);
  if (typeof parsed === 'string') return json(400, { error: parsed });

  const idempotencyKey = request.headers.get('idempotency-key') ?? undefined;
  try {
    const sent = await heraldFor(env).notifications.send({ ...parsed, idempotencyKey });
    return json(202, { notificationId: sent.notificationId, status: sent.status, deliveryChannel: sent.deliveryChannel });
  } catch (error) {
    if (error instanceof HeraldApiError) {
      if ([400, 404, 409].includes(error.statusCode)) return json(error.statusCode, { error: error.message, code: error.code });
      if (error.statusCode === 429 || error.statusCode === 402) {
        const headers: Record<string, string> = {};
        if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(Math.ceil(error.retryAfterSeconds));
        return json(503, { error: 'Notifications are unavailable for now, try again later', code: error.code }, headers);
      }
      // 401/403 mean this function's key is wrong: the caller cannot fix that, so do not echo it.
      console.error(`Herald refused the send: ${error.code} ${error.message} (request ${error.requestId})`);
      return json(500, { error: 'Notification service misconfigured' });
    }
    if (error instanceof HeraldNetworkError) return json(502, { error: 'Notification service unreachable' });
    throw error;
  }
}

/** Cloudflare Workers and other `export default { fetch }` platforms. */
export default { fetch: (request: Request, env: Env) => handler(request, env) };

/** Invokes the handler once with a sample request, as the platform would. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (!env.HERALD_WALLET) {
    console.error('Set HERALD_WALLET (and HERALD_API_KEY, HERALD_BASE_URL)');
    return 2;
  }
  const request = new Request('http://localhost/notify', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': env.IDEMPOTENCY_KEY ?? `serverless-demo-${randomUUID()}` },
    body: JSON.stringify({ wallet: env.HERALD_WALLET, subject: 'Your withdrawal is complete', body: 'The funds are in your wallet.', category: 'defi' }),
  });
  const response = await handler(request, env);
  console.log(JSON.stringify({ status: response.status, body: await response.json() }));
  return response.status === 202 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  main().then(
    (code) => (process.exitCode = code),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
