/**
 * Clients that hold server connections without finishing their requests: slow headers (one byte
 * at a time), a slow body (a declared 1 MB trickled in), and idle keep-alive connections. Each
 * records when the server closed it and what, if anything, it answered.
 */
import net from 'node:net';
import { parseResponses, type RawResponse } from './raw-http.js';

export interface Held {
  kind: 'slow-header' | 'slow-body' | 'idle-keep-alive';
  /**
   * Milliseconds until the server closed the connection (undefined while open), counted from where
   * the server's clock starts: the connection for a request in progress, the last answer for an
   * idle keep-alive connection.
   */
  closedAfterMs?: number;
  /** The server's answers on this connection. */
  responses: RawResponse[];
  socket: net.Socket;
}

function hold(port: number, kind: Held['kind'], onConnect: (socket: net.Socket) => void): Held {
  const socket = net.connect(port, '127.0.0.1');
  const held: Held = { kind, responses: [], socket };
  const chunks: Buffer[] = [];
  let since = Date.now();
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    if (kind === 'idle-keep-alive') since = Date.now();
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    held.closedAfterMs = Date.now() - since;
    held.responses = parseResponses(Buffer.concat(chunks)).responses;
  });
  socket.on('connect', () => {
    since = Date.now();
    onConnect(socket);
  });
  return held;
}

/** Trickles `bytes`, `step` bytes every `everyMs`, until done or the socket closes. */
function trickle(socket: net.Socket, bytes: Buffer, step: number, everyMs: number): void {
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || at >= bytes.length) return clearInterval(timer);
    socket.write(bytes.subarray(at, at + step));
    at += step;
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

/** Request headers sent one byte per 200 ms: never complete within any sane header timeout. */
export function slowHeader(port: number): Held {
  const head = Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\nX-Padding: ${'p'.repeat(400)}\r\n\r\n`);
  return hold(port, 'slow-header', (socket) => trickle(socket, head, 1, 200));
}

/** Complete headers declaring a 1 MB JSON body, then 1 KB of it every 200 ms (about 3.5 minutes in all). */
export function slowBody(port: number, apiKey: string): Held {
  const size = 1024 * 1024;
  const body = Buffer.from(`{"subject":"${'s'.repeat(size - 14)}"}`);
  const head = `POST /v1/notify HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  return hold(port, 'slow-body', (socket) => {
    socket.write(head);
    trickle(socket, body, 1024, 200);
  });
}

/** One complete request, then silence on the open keep-alive connection. */
export function idleKeepAlive(port: number): Held {
  return hold(port, 'idle-keep-alive', (socket) => socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n'));
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
