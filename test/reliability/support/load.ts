/**
 * The load generator: notifications numbered 0…total-1, sent as single and bulk requests spread
 * round-robin over every API process, a bounded number in flight, optionally paced, each request
 * bounded by a timeout. Accepted notifications go into the ledger; every other answer is counted.
 */
import { sleep } from '../../support/gateway.js';
import { isContractError } from './contract-error.js';
import { CHANNELS, subjectFor, type Ledger } from './sinks.js';

export interface LoadOptions {
  urls: string[];
  apiKey: string;
  wallets: string[];
  total: number;
  ledger: Ledger;
  /** Requests in flight at once. */
  concurrency: number;
  /** Notifications per second; unpaced when absent. */
  ratePerSecond?: number;
  /** Request sizes, used in turn (1 = POST /v1/notify, more = POST /v1/notify/bulk). */
  sizes?: number[];
  timeoutMs: number;
  /** Stops early (no new requests) once this returns true. */
  stop?: () => boolean;
  /** Gives every notification the idempotency key `<prefix>-<seq>`, so a retry is safe. */
  idempotencyPrefix?: string;
}

export interface LoadReport {
  requests: number;
  byStatus: Record<string, number>;
  /** Error answers whose body is not exactly {statusCode, error, message, code} matching the status. */
  badErrorBodies: Array<{ status: number; body: string }>;
  timeouts: number;
  networkErrors: number;
  maxLatencyMs: number;
  /** When (ms since start) each request answered 503 was sent, to check they fall inside the outage. */
  unavailableAt: number[];
  /** When (ms since start) each 503 answer came: a slow request sent before an outage is answered in it. */
  unavailableAnsweredAt: number[];
  elapsedMs: number;
}

/** Notification number `seq`: the same payload (and key) every time it is sent. */
function notification(seq: number, options: Pick<LoadOptions, 'wallets' | 'idempotencyPrefix'>) {
  return {
    wallet: options.wallets[seq % options.wallets.length],
    subject: subjectFor(seq),
    body: `Load message number **${seq}**.`,
    category: 'system',
    preferredChannel: CHANNELS[seq % CHANNELS.length],
    ...(options.idempotencyPrefix ? { idempotencyKey: `${options.idempotencyPrefix}-${seq}` } : {}),
  };
}

/**
 * Sends `seqs` again as bulk requests with their idempotency keys, as a client retrying after
 * errors would: each answer is `queued` (it had not been stored) or `duplicate` with the original
 * id (it had). Both go into the ledger. Returns how many of each.
 */
export async function resendWithKeys(options: LoadOptions, seqs: number[]): Promise<{ queued: number; duplicate: number; other: string[] }> {
  const outcome = { queued: 0, duplicate: 0, other: [] as string[] };
  for (let at = 0; at < seqs.length; at += 100) {
    const chunk = seqs.slice(at, at + 100);
    const res = await fetch(`${options.urls[0]}/v1/notify/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ notifications: chunk.map((seq) => notification(seq, options)) }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const body = (await res.json()) as { results?: Array<{ status: string; notificationId: string; deliveryChannel: any }> };
    if (res.status !== 202 || !body.results) {
      outcome.other.push(`${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      continue;
    }
    body.results.forEach((result, i) => {
      if (result.status === 'queued' || result.status === 'duplicate') {
        outcome[result.status] += 1;
        options.ledger.unacknowledged.delete(chunk[i]);
        options.ledger.accept(chunk[i], result.notificationId, CHANNELS[chunk[i] % CHANNELS.length]);
      } else {
        outcome.other.push(result.status);
      }
    });
  }
  return outcome;
}

export async function generateLoad(options: LoadOptions): Promise<LoadReport> {
  const sizes = options.sizes ?? [1, 5, 20];
  const report: LoadReport = { requests: 0, byStatus: {}, badErrorBodies: [], timeouts: 0, networkErrors: 0, maxLatencyMs: 0, unavailableAt: [], unavailableAnsweredAt: [], elapsedMs: 0 };
  const started = Date.now();
  let nextSeq = 0;
  let turn = 0;

  async function one(seqs: number[], url: string) {
    const items = seqs.map((seq) => notification(seq, options));
    const single = items.length === 1;
    const sentAt = Date.now();
    let status: number;
    let text: string;
    try {
      const res = await fetch(`${url}${single ? '/v1/notify' : '/v1/notify/bulk'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(single ? items[0] : { notifications: items }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      status = res.status;
      text = await res.text();
    } catch (error) {
      for (const seq of seqs) options.ledger.unacknowledged.add(seq);
      if ((error as Error).name === 'TimeoutError') report.timeouts += 1;
      else report.networkErrors += 1;
      return;
    } finally {
      report.maxLatencyMs = Math.max(report.maxLatencyMs, Date.now() - sentAt);
    }
    report.byStatus[status] = (report.byStatus[status] ?? 0) + 1;
    if (status === 503) {
      report.unavailableAt.push(sentAt - started);
      report.unavailableAnsweredAt.push(Date.now() - started);
    }
    // A 5xx can come after the commit (the connection dropped before the answer): maybe accepted.
    if (status >= 500) for (const seq of seqs) options.ledger.unacknowledged.add(seq);
    if (status !== 202) {
      if (!isContractError(status, text) && report.badErrorBodies.length < 20) report.badErrorBodies.push({ status, body: text.slice(0, 300) });
      return;
    }
    const body = JSON.parse(text);
    const results = single ? [body] : body.results;
    results.forEach((result: { status: string; notificationId: string; deliveryChannel: any }, i: number) => {
      if (result.status === 'queued') options.ledger.accept(seqs[i], result.notificationId, result.deliveryChannel);
      else report.byStatus[`202:${result.status}`] = (report.byStatus[`202:${result.status}`] ?? 0) + 1;
    });
  }

  async function lane() {
    while (nextSeq < options.total && !options.stop?.()) {
      const size = Math.min(sizes[turn % sizes.length], options.total - nextSeq);
      const url = options.urls[turn % options.urls.length];
      turn += 1;
      const seqs = Array.from({ length: size }, (_, i) => nextSeq + i);
      nextSeq += size;
      if (options.ratePerSecond) {
        const due = started + (seqs[0] / options.ratePerSecond) * 1000;
        if (due > Date.now()) await sleep(due - Date.now());
      }
      report.requests += 1;
      await one(seqs, url);
    }
  }

  await Promise.all(Array.from({ length: options.concurrency }, lane));
  report.elapsedMs = Date.now() - started;
  return report;
}
