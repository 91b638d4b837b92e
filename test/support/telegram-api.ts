/**
 * A local HTTP server speaking the Telegram Bot API `sendMessage` contract: token in the path,
 * JSON in, `{ok, result}` / `{ok: false, error_code, description, parameters}` out. It checks the
 * HTML parse mode the way Telegram does (only its tag subset, balanced tags, escaped `<`, `>`,
 * `&`), records every request, and can be scripted to answer 429 / 403 / 400 / 500, any refusal given, or to stall.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TelegramRequest {
  method: string;
  /** The token the request used (from `/bot<token>/…`). */
  token: string;
  contentType: string;
  userAgent: string;
  body: Record<string, unknown>;
  /** Status the server answered. */
  status: number;
  at: number;
}

export type TelegramAnswer =
  | { kind: 'rate-limited'; retryAfter: number }
  | { kind: 'blocked' }
  | { kind: 'chat-not-found' }
  | { kind: 'server-error' }
  | { kind: 'refused'; status: number; description: string }
  | { kind: 'delay'; ms: number };

export interface TestTelegramApi {
  /** Base URL for TELEGRAM_API_URL. */
  url: string;
  token: string;
  received: TelegramRequest[];
  /** Answers the next `times` (default 1) sendMessage calls, to `chatId` or to anyone, with `answer`. */
  script(answer: TelegramAnswer, options?: { chatId?: string; times?: number }): void;
  close(): Promise<void>;
}

const TAGS = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'span', 'tg-spoiler', 'a', 'code', 'pre', 'blockquote', 'tg-emoji']);

/** The reason Telegram would refuse `text` in HTML parse mode, or undefined when it parses. */
export function telegramHtmlError(text: string): string | undefined {
  const open: string[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '<') {
      const tag = /^<(\/?)([a-z-]+)((?:\s+[a-z-]+="[^"<]*")*)\s*>/i.exec(text.slice(i));
      if (!tag) return `Unsupported start tag at byte offset ${i}`;
      const [whole, closing, name] = tag;
      const lower = name.toLowerCase();
      if (!TAGS.has(lower)) return `Unsupported start tag "${lower}" at byte offset ${i}`;
      if (closing) {
        if (open.pop() !== lower) return `Unmatched end tag at byte offset ${i}, expected "</${lower}>"`;
      } else {
        open.push(lower);
      }
      i += whole.length - 1;
    } else if (text[i] === '>') {
      return `Unexpected end tag at byte offset ${i}`;
    } else if (text[i] === '&' && !/^&(?:lt|gt|amp|quot|#\d+|#x[0-9a-f]+);/i.test(text.slice(i))) {
      return `Unsupported entity at byte offset ${i}`;
    }
  }
  return open.length ? `Can't find end tag corresponding to start tag "${open.at(-1)}"` : undefined;
}

function reply(res: ServerResponse, status: number, body: unknown): number {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  return status;
}

function refuse(res: ServerResponse, status: number, description: string, parameters?: Record<string, unknown>): number {
  return reply(res, status, { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) });
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if ((req.headers['content-type'] ?? '').includes('application/json')) return text ? JSON.parse(text) : {};
  return Object.fromEntries(new URLSearchParams(text));
}

export async function startTelegramApi(options: { token?: string } = {}): Promise<TestTelegramApi> {
  const token = options.token ?? '123456:TEST-token_abcdefghijklmnopqrstu';
  const received: TelegramRequest[] = [];
  const scripted: { answer: TelegramAnswer; chatId?: string; left: number }[] = [];
  let nextMessageId = 1;

  async function sendMessage(body: Record<string, unknown>, res: ServerResponse): Promise<number> {
    const chatId = body.chat_id === undefined ? undefined : String(body.chat_id);
    const entry = scripted.find((s) => s.left > 0 && (s.chatId === undefined || s.chatId === chatId));
    if (entry) entry.left -= 1;
    const answer = entry?.answer;
    if (answer?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, answer.ms));
    if (answer?.kind === 'rate-limited') {
      return refuse(res, 429, `Too Many Requests: retry after ${answer.retryAfter}`, { retry_after: answer.retryAfter });
    }
    if (answer?.kind === 'blocked') return refuse(res, 403, 'Forbidden: bot was blocked by the user');
    if (answer?.kind === 'chat-not-found') return refuse(res, 400, 'Bad Request: chat not found');
    if (answer?.kind === 'server-error') return refuse(res, 500, 'Internal Server Error');
    if (answer?.kind === 'refused') return refuse(res, answer.status, answer.description);
    if (!chatId) return refuse(res, 400, 'Bad Request: chat_id is empty');
    const text = typeof body.text === 'string' ? body.text : '';
    if (!text.trim()) return refuse(res, 400, 'Bad Request: message text is empty');
    if (body.parse_mode === 'HTML') {
      const problem = telegramHtmlError(text);
      if (problem) return refuse(res, 400, `Bad Request: can't parse entities: ${problem}`);
    }
    return reply(res, 200, {
      ok: true,
      result: { message_id: nextMessageId++, date: Math.floor(Date.now() / 1000), chat: { id: Number(chatId) || chatId, type: 'private' }, text },
    });
  }

  const server = createServer(async (req, res) => {
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.url ?? '');
    const record: TelegramRequest = { method: match?.[2] ?? '', token: match?.[1] ?? '', contentType: req.headers['content-type'] ?? '', userAgent: req.headers['user-agent'] ?? '', body: {}, status: 0, at: Date.now() };
    try {
      record.body = await readBody(req);
    } catch {
      received.push(record);
      record.status = refuse(res, 400, 'Bad Request: invalid JSON');
      return;
    }
    received.push(record);
    if (!match || req.method !== 'POST') record.status = refuse(res, 404, 'Not Found');
    else if (match[1] !== token) record.status = refuse(res, 401, 'Unauthorized');
    else if (match[2] !== 'sendMessage') record.status = refuse(res, 404, 'Not Found: method not found');
    else record.status = await sendMessage(record.body, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    received,
    script(answer, { chatId, times = 1 } = {}) {
      scripted.push({ answer, chatId, left: times });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
