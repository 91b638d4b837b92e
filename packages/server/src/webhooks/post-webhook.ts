import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { storableText } from '../db/storable-text.js';
import type { WebhookTarget } from './resolve-target.js';

/** What one attempt got back; `ok` = the receiver answered 2xx within the time limit. */
export interface PostResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** The first 1 KB of the answer, as text. */
  responseBody: string | null;
  error: string | null;
}

export const RESPONSE_BODY_LIMIT = 1024;

export interface PostOptions {
  timeoutMs: number;
  agents: { http: http.Agent; https: https.Agent };
}

/** Keep-alive agents; idle sockets close before a typical server's 5 s keep-alive timeout would. */
export function webhookAgents(maxSockets = 256): PostOptions['agents'] {
  const options = { keepAlive: true, maxSockets, maxFreeSockets: 64, timeout: 4000, scheduling: 'lifo' as const };
  return { http: new http.Agent(options), https: new https.Agent(options) };
}

/** Connects to the address resolved (and checked) beforehand, never to a fresh DNS answer. */
function pinnedLookup(target: WebhookTarget): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as LookupFunction;
}

/**
 * POSTs `body` to the target. Redirects are never followed (a 3xx is a failed attempt). Only the
 * first 1 KB of the answer is read; a longer answer's connection is dropped.
 */
export async function postWebhook(target: WebhookTarget, body: string, headers: Record<string, string>, options: PostOptions): Promise<PostResult> {
  const first = await postOnce(target, body, headers, options);
  // A keep-alive socket the receiver closed while idle fails at once; that is not the receiver's answer.
  if (first.reusedSocketReset) return postOnce(target, body, headers, options);
  return first;
}

function postOnce(
  target: WebhookTarget,
  body: string,
  headers: Record<string, string>,
  { timeoutMs, agents }: PostOptions,
): Promise<PostResult & { reusedSocketReset?: boolean }> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const isHttps = target.url.protocol === 'https:';
  return new Promise((resolve) => {
    let statusCode: number | null = null;
    let location: string | undefined;
    let latencyMs = 0;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const finish = (error: string | null, extra: { reusedSocketReset?: boolean } = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      const responseBody = statusCode === null ? null : responseText(chunks);
      resolve({ ok, statusCode, latencyMs: statusCode === null ? elapsed() : latencyMs, responseBody, error: error ?? statusProblem(statusCode, location), ...extra });
    };

    const request = (isHttps ? https : http).request({
      method: 'POST',
      protocol: target.url.protocol,
      hostname: target.hostname,
      port: target.url.port || (isHttps ? 443 : 80),
      path: `${target.url.pathname}${target.url.search}`,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: isHttps ? agents.https : agents.http,
      lookup: pinnedLookup(target),
      // SNI carries host names only (RFC 6066); certificates are checked against the URL's host.
      ...(isHttps && !isIP(target.hostname) ? { servername: target.hostname } : {}),
    });
    const timer = setTimeout(() => {
      // A receiver that answered in time keeps its status even if the rest of its body is slow.
      if (statusCode !== null) finish(null);
      else finish(`no answer within ${timeoutMs} ms`);
      request.destroy();
    }, timeoutMs);

    request.on('response', (response) => {
      statusCode = response.statusCode ?? null;
      latencyMs = elapsed();
      location = response.headers.location;
      response.on('data', (chunk: Buffer) => {
        if (received < RESPONSE_BODY_LIMIT) chunks.push(chunk);
        received += chunk.length;
        if (received >= RESPONSE_BODY_LIMIT) {
          finish(null);
          response.destroy();
        }
      });
      response.on('end', () => finish(null));
      response.on('error', () => finish(null));
      response.on('close', () => finish(null));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      const reset = request.reusedSocket && statusCode === null && error.code === 'ECONNRESET';
      finish(error.message || error.code || 'request failed', reset ? { reusedSocketReset: true } : {});
    });
    request.end(body);
  });
}

function statusProblem(statusCode: number | null, location: string | undefined): string | null {
  if (statusCode === null || (statusCode >= 200 && statusCode < 300)) return null;
  if (statusCode >= 300 && statusCode < 400) {
    return `receiver answered ${statusCode}${location ? ` redirecting to ${location.slice(0, 200)}` : ''}; redirects are not followed`;
  }
  return `receiver answered ${statusCode}`;
}

/** The first 1 KB as text; NUL characters are dropped because PostgreSQL text cannot hold them. */
function responseText(chunks: Buffer[]): string {
  return storableText(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8'));
}
