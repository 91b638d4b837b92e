/**
 * Webhook receiver: a node:http server that accepts Herald's signed events, checks the
 * `x-service-signature` header over the raw body with `verifyWebhookSignature` (401 when it does not
 * match), and handles each event once, deduplicating on the event id.
 *
 * - Verify the raw bytes exactly as received: re-serialized JSON would not match the signature.
 * - A stale timestamp (more than 5 minutes away) fails verification too, so a captured request
 *   cannot be replayed later.
 * - Delivery is at-least-once (retries, replays from the delivery log): an event id already handled
 *   is acknowledged with 200 and not handled again. This example remembers ids in memory; in
 *   production record them in your database, in the same transaction as the event's effects.
 * - Answer 2xx quickly (Herald waits 15 s); a 5xx or no answer makes Herald retry (5 s, 5 min,
 *   30 min, 2 h, …). A handler that throws answers 500, so the event comes again.
 *
 * Run: HERALD_WEBHOOK_SECRET=whsec_… PORT=8787 node --import tsx examples/webhook.ts
 * then register the public URL of /herald (`herald webhook create --url https://…/herald`, or
 * POST /v1/webhooks) and try it with `herald webhook test <id>`. Each handled event is printed as
 * one JSON line; SIGINT or SIGTERM stops the server and exits 0.
 */
import http from 'node:http';
import { realpathSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import type { WebhookEvent } from '@herald/sdk';
import { SIGNATURE_HEADER, verifyWebhookSignature } from '@herald/sdk/webhooks';

/** Herald's events are small; anything much larger is not from Herald. */
const MAX_BODY_BYTES = 256 * 1024;

export interface ReceiverOptions {
  /** The endpoint's `whsec_…` secret, shown once when the webhook was created. */
  secret: string;
  /** Your handling of one event; throwing makes the receiver answer 500 so Herald retries. */
  onEvent(event: WebhookEvent): Promise<void> | void;
  /** Called for an event id seen before (a retry or a replay). */
  onDuplicate?(event: WebhookEvent): void;
  /** The path Herald posts to; default `/herald`. */
  path?: string;
}

/** Reads the body as bytes; null when it is larger than the limit. */
async function readRawBody(request: http.IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function answer(response: http.ServerResponse, status: number, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(http.STATUS_CODES[status]);
}

export function createWebhookReceiver({ secret, onEvent, onDuplicate, path = '/herald' }: ReceiverOptions): http.Server {
  // Ids handled or being handled. Marking before handling keeps two concurrent deliveries of one
  // event from both running it; a failed handling unmarks it so the retry can run.
  const seen = new Set<string>();

  return http.createServer(async (request, response) => {
    if (new URL(request.url ?? '/', 'http://receiver').pathname !== path) return answer(response, 404);
    if (request.method !== 'POST') return answer(response, 405, { allow: 'POST' });
    if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return answer(response, 413, { connection: 'close' });
    const raw = await readRawBody(request);
    if (raw === null) return answer(response, 413, { connection: 'close' });

    const header = request.headers[SIGNATURE_HEADER];
    if (!verifyWebhookSignature(raw, typeof header === 'string' ? header : undefined, secret)) return answer(response, 401);

    let event: WebhookEvent;
    try {
      event = JSON.parse(raw.toString('utf8')) as WebhookEvent;
    } catch {
      return answer(response, 400);
    }
    if (seen.has(event.id)) {
      onDuplicate?.(event);
      return answer(response, 200);
    }
    seen.add(event.id);
    try {
      await onEvent(event);
    } catch (error) {
      seen.delete(event.id);
      console.error(`Handling ${event.type} ${event.id} failed:`, error);
      return answer(response, 500);
    }
    answer(response, 200);
  });
}

/** What this example does with each event: print one JSON line. Replace with your own handling. */
function logEvent(event: WebhookEvent): void {
  const { notification_id, wallet, channel, reason } = event.data as Record<string, string | undefined>;
  console.log(JSON.stringify({ handled: event.id, type: event.type, created: event.created, notificationId: notification_id, wallet, channel, reason }));
}

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const secret = env.HERALD_WEBHOOK_SECRET;
  if (!secret) {
    console.error('Set HERALD_WEBHOOK_SECRET to the secret shown when the webhook was created');
    return 2;
  }
  const server = createWebhookReceiver({
    secret,
    onEvent: logEvent,
    onDuplicate: (event) => console.log(JSON.stringify({ duplicate: event.id, type: event.type })),
  });
  await new Promise<void>((resolve) => server.listen(Number(env.PORT ?? 8787), env.HOST ?? '0.0.0.0', resolve));
  const { address, port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ listening: `http://${address.includes(':') ? `[${address}]` : address}:${port}/herald` }));

  await new Promise<void>((resolve) => {
    const stop = () => {
      server.close(() => resolve());
      server.closeIdleConnections();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
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
