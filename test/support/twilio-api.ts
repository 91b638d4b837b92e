/**
 * A local HTTP server speaking the Twilio Messages API contract: `POST /2010-04-01/Accounts/<sid>/
 * Messages.json`, HTTP basic auth, form-encoded To / From (or MessagingServiceSid) / Body, answers
 * shaped like Twilio's (201 message resource, `{code, message, more_info, status}` errors). Records
 * every request and can be scripted to answer with Twilio error codes, 429 (with Retry-After) or
 * 500, or to stall.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TwilioRequest {
  path: string;
  /** Basic auth credentials as sent (undefined when absent or unreadable). */
  username?: string;
  password?: string;
  contentType: string;
  userAgent: string;
  form: Record<string, string>;
  status: number;
  at: number;
}

export type TwilioAnswer =
  | { kind: 'error'; code: 21211 | 21610 | 21614 | 21408 | number; status?: number; message?: string }
  | { kind: 'rate-limited'; retryAfter?: string }
  | { kind: 'server-error'; retryAfter?: string }
  | { kind: 'delay'; ms: number };

export interface TestTwilioApi {
  /** Base URL for TWILIO_API_URL. */
  url: string;
  accountSid: string;
  authToken: string;
  received: TwilioRequest[];
  /** Answers the next `times` (default 1) messages, to `to` or to anyone, with `answer`. */
  script(answer: TwilioAnswer, options?: { to?: string; times?: number }): void;
  close(): Promise<void>;
}

const MESSAGES: Record<number, string> = {
  21211: "The 'To' number {to} is not a valid phone number.",
  21408: 'Permission to send an SMS has not been enabled for the region indicated by the To number: {to}.',
  21610: 'Attempt to send to unsubscribed recipient',
  21614: "'To' number {to} is not a valid mobile number",
};

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): number {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  return status;
}

function twilioError(res: ServerResponse, status: number, code: number, message: string, headers?: Record<string, string>): number {
  return answer(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }, headers);
}

function basicAuth(header: string | undefined): { username?: string; password?: string } {
  const match = /^Basic\s+(.+)$/i.exec(header ?? '');
  if (!match) return {};
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? {} : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export async function startTwilioApi(options: { accountSid?: string; authToken?: string } = {}): Promise<TestTwilioApi> {
  const accountSid = options.accountSid ?? `AC${'0123456789abcdef'.repeat(2)}`;
  const authToken = options.authToken ?? 'test-auth-token-0123456789abcdef';
  const received: TwilioRequest[] = [];
  const scripted: { answer: TwilioAnswer; to?: string; left: number }[] = [];

  async function createMessage(form: Record<string, string>, res: ServerResponse): Promise<number> {
    const to = form.To ?? '';
    const entry = scripted.find((s) => s.left > 0 && (s.to === undefined || s.to === to));
    if (entry) entry.left -= 1;
    const scriptedAnswer = entry?.answer;
    if (scriptedAnswer?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, scriptedAnswer.ms));
    if (scriptedAnswer?.kind === 'rate-limited') {
      return twilioError(res, 429, 20429, 'Too Many Requests', scriptedAnswer.retryAfter ? { 'retry-after': scriptedAnswer.retryAfter } : {});
    }
    if (scriptedAnswer?.kind === 'server-error') {
      return twilioError(res, 500, 20500, 'Internal Server Error', scriptedAnswer.retryAfter ? { 'retry-after': scriptedAnswer.retryAfter } : {});
    }
    if (scriptedAnswer?.kind === 'error') {
      const message = (scriptedAnswer.message ?? MESSAGES[scriptedAnswer.code] ?? 'Error').replace('{to}', to);
      return twilioError(res, scriptedAnswer.status ?? 400, scriptedAnswer.code, message);
    }
    if (!to) return twilioError(res, 400, 21604, "A 'To' phone number is required.");
    if (!form.From && !form.MessagingServiceSid) return twilioError(res, 400, 21603, "A 'From' phone number is required.");
    if (!form.Body) return twilioError(res, 400, 21602, 'Message body is required.');
    if (!/^\+[1-9]\d{6,14}$/.test(to)) return twilioError(res, 400, 21211, MESSAGES[21211].replace('{to}', to));
    const now = new Date().toUTCString();
    return answer(res, 201, {
      sid: `SM${randomBytes(16).toString('hex')}`,
      account_sid: accountSid,
      to,
      from: form.From ?? null,
      messaging_service_sid: form.MessagingServiceSid ?? null,
      body: form.Body,
      status: form.MessagingServiceSid ? 'accepted' : 'queued',
      num_segments: '1',
      direction: 'outbound-api',
      date_created: now,
      date_updated: now,
      api_version: '2010-04-01',
      error_code: null,
      error_message: null,
    });
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const contentType = req.headers['content-type'] ?? '';
    const form = contentType.startsWith('application/x-www-form-urlencoded')
      ? Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')))
      : {};
    const record: TwilioRequest = { path: req.url ?? '', ...basicAuth(req.headers.authorization), contentType, userAgent: req.headers['user-agent'] ?? '', form, status: 0, at: Date.now() };
    received.push(record);
    const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(record.path);
    if (record.username !== accountSid || record.password !== authToken) {
      record.status = twilioError(res, 401, 20003, 'Authenticate', { 'www-authenticate': 'Basic realm="Twilio API"' });
    } else if (!match || req.method !== 'POST') {
      record.status = twilioError(res, 404, 20404, 'The requested resource was not found');
    } else if (match[1] !== accountSid) {
      record.status = twilioError(res, 403, 20003, 'Authentication Error - No credentials provided for this account');
    } else {
      record.status = await createMessage(form, res);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    received,
    script(scriptedAnswer, { to, times = 1 } = {}) {
      scripted.push({ answer: scriptedAnswer, to, left: times });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
