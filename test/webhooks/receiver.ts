/**
 * A real webhook receiver on 127.0.0.1 for tests: it records every request (raw body included)
 * and answers as told: any status, a hang (no answer until closed), or a redirect.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sleep } from '../support/gateway.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Answer = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides each answer; the default is 200 "ok". */
  answer: (request: ReceivedRequest) => Answer;
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    answer: () => ({ status: 200, body: 'ok' }),
    async waitForRequests(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.requests.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${receiver.requests.length} requests, expected ${count}`);
        await sleep(10);
      }
      return receiver.requests;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      receiver.requests.push(received);
      const answer = receiver.answer(received);
      if (answer === 'hang') return;
      const send = () => {
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
