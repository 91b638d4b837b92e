/**
 * An HTTP proxy in front of a real gateway that can lose answers: a request chosen with
 * `loseNextAnswer` still reaches the gateway and does its work there, but the client gets a 503,
 * or its connection is cut, instead of the gateway's answer, as when a response is lost on the way
 * back. A request `answerInstead` answers for never reaches the gateway (a rate limit in between).
 * Every other request passes through unchanged.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

export type Loss = '503' | 'drop';

export interface SeenRequest {
  method: string;
  path: string;
  body: string;
  headers: IncomingHttpHeaders;
}

/** An answer the proxy gives itself. */
export interface OwnAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface LossyProxy {
  url: string;
  /** Every request that came through, in order. */
  seen: SeenRequest[];
  /** The next `method path` request is forwarded, and its answer replaced by `loss`. */
  loseNextAnswer(method: string, path: string, loss: Loss): void;
  /** Answers the requests it returns an answer for (given each request as seen) without forwarding them. */
  answerInstead: ((request: SeenRequest) => OwnAnswer | undefined) | undefined;
  close(): Promise<void>;
}

// Hop-by-hop, or recomputed by fetch and by the server's writeHead.
const NOT_FORWARDED = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-encoding']);

function forwardable(headers: IncomingHttpHeaders | Headers): Record<string, string> {
  const entries = headers instanceof Headers ? [...headers] : Object.entries(headers).map(([name, value]) => [name, String(value)]);
  return Object.fromEntries(entries.filter(([name]) => !NOT_FORWARDED.has(name.toLowerCase())));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startLossyProxy(target: string): Promise<LossyProxy> {
  const seen: SeenRequest[] = [];
  const losses: { method: string; path: string; loss: Loss }[] = [];
  const server = createServer(async (request, response) => {
    const method = request.method ?? 'GET';
    const path = request.url ?? '/';
    const body = await readBody(request);
    seen.push({ method, path, body, headers: request.headers });
    const own = proxy.answerInstead?.(seen[seen.length - 1]);
    if (own) return void response.writeHead(own.status, { 'content-type': 'application/json', ...own.headers }).end(JSON.stringify(own.body));
    try {
      const upstream = await fetch(`${target}${path}`, { method, headers: forwardable(request.headers), body: body || undefined });
      const text = await upstream.text();
      const at = losses.findIndex((l) => l.method === method && l.path === path.split('?')[0]);
      if (at === -1) return void response.writeHead(upstream.status, forwardable(upstream.headers)).end(text);
      const [{ loss }] = losses.splice(at, 1);
      if (loss === 'drop') return void request.socket.destroy();
      const error = { statusCode: 503, error: 'Service Unavailable', code: 'SERVICE_UNAVAILABLE', message: 'answer lost by the test proxy' };
      response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify(error));
    } catch (error) {
      response.writeHead(502, { 'content-type': 'text/plain' }).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const proxy: LossyProxy = {
    url: `http://127.0.0.1:${port}`,
    seen,
    loseNextAnswer: (method, path, loss) => void losses.push({ method, path, loss }),
    answerInstead: undefined,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
