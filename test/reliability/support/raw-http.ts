/**
 * HTTP/1.1 over a bare socket, for requests fetch will not send: bytes that are not UTF-8, a
 * Content-Length that does not match the body, malformed chunking, header values fetch refuses.
 * Sends `Connection: close`, reads until the server closes, and splits what came back into
 * responses.
 */
import net from 'node:net';

export interface RawRequest {
  method: string;
  /** Request target exactly as sent (already percent-encoded, or deliberately not). */
  target: string;
  /** Header lines as [name, value]; values are written as latin1 bytes. */
  headers: Array<[string, string]>;
  body?: Buffer;
  /**
   * How the body is framed: `length` = a correct Content-Length; `short` = a Content-Length
   * smaller than the body (the rest reads as a next request); `long` = larger than the body, then
   * the client stops sending; `chunked` = Transfer-Encoding: chunked; `none` = no framing header.
   */
  framing?: 'length' | 'short' | 'long' | 'chunked' | 'none';
  timeoutMs?: number;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawOutcome {
  responses: RawResponse[];
  /** Bytes that could not be read as a response (should be none). */
  unparsed: string;
  timedOut: boolean;
  ms: number;
}

function head(request: RawRequest, body: Buffer): Buffer {
  const lines = [`${request.method} ${request.target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  const framing = request.framing ?? 'length';
  if (body.length || framing !== 'length') {
    if (framing === 'length') lines.push(`Content-Length: ${body.length}`);
    if (framing === 'short') lines.push(`Content-Length: ${Math.floor(body.length / 2)}`);
    if (framing === 'long') lines.push(`Content-Length: ${body.length + 1000}`);
    if (framing === 'chunked') lines.push('Transfer-Encoding: chunked');
  }
  return Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
}

function frame(request: RawRequest, body: Buffer): Buffer {
  if (request.framing !== 'chunked') return body;
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += 4096) {
    const piece = body.subarray(at, at + 4096);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`, 'latin1'), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** Splits raw bytes into responses (Content-Length or chunked bodies, or to the end); a HEAD answer has no body. */
export function parseResponses(raw: Buffer, method = 'GET'): { responses: RawResponse[]; unparsed: string } {
  const responses: RawResponse[] = [];
  let rest = raw;
  while (rest.length) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0 || !rest.subarray(0, 5).toString('latin1').startsWith('HTTP/')) break;
    const lines = rest.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let body: Buffer;
    let after = end + 4;
    const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
    // An answer to a request the server could not parse carries a body even when the request said
    // HEAD (the server never learnt the method): exactly Content-Length bytes and then the close.
    const headAnswer = method === 'HEAD' && responses.every((r) => r.status < 200) && rest.length - (end + 4) !== length;
    if (status < 200 || status === 204 || status === 304 || headAnswer) {
      body = Buffer.alloc(0);
    } else if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const chunks: Buffer[] = [];
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', after);
        if (lineEnd < 0) break;
        const size = parseInt(rest.subarray(after, lineEnd).toString('latin1'), 16);
        after = lineEnd + 2;
        if (!size) {
          after += 2;
          break;
        }
        chunks.push(rest.subarray(after, after + size));
        after += size + 2;
      }
      body = Buffer.concat(chunks);
    } else if (length !== undefined) {
      body = rest.subarray(after, after + length);
      after += length;
    } else {
      body = rest.subarray(after);
      after = rest.length;
    }
    responses.push({ status, headers, body: body.toString('utf8') });
    rest = rest.subarray(Math.min(after, rest.length));
  }
  return { responses, unparsed: rest.toString('latin1').slice(0, 200) };
}

export function rawRequest(port: number, request: RawRequest): Promise<RawOutcome> {
  const body = request.body ?? Buffer.alloc(0);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, request.timeoutMs ?? 15_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close before reading everything (a 413, a parse error): that is its answer.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ ...parseResponses(Buffer.concat(chunks), request.method), timedOut, ms: Date.now() - started });
    });
    socket.on('connect', () => {
      socket.write(head(request, body));
      socket.write(frame(request, body));
      // A client that declared more than it sends stops there (half-close), as a broken client would.
      if (request.framing === 'long') socket.end();
    });
  });
}
