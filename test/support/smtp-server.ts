/**
 * A real SMTP server (the `smtp-server` package) on 127.0.0.1 for tests. It keeps every message it
 * accepts (raw, headers, decoded text and html parts) and can be scripted, per recipient, to refuse
 * (550, 451, any code, at RCPT TO or after DATA), to stall, or to drop the connection.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

export interface ReceivedMail {
  /** Envelope sender and recipients (MAIL FROM / RCPT TO). */
  from: string;
  to: string[];
  /** The login used, when the client authenticated. */
  user?: string;
  raw: string;
  /** Top-level headers, names lower-cased, folded lines joined, first occurrence kept. */
  headers: Record<string, string>;
  /** The Subject header with RFC 2047 encoded words decoded. */
  subject: string;
  /** Content-Type of the top-level part, without parameters. */
  contentType: string;
  /** Decoded bodies of the first text/plain and text/html parts. */
  text?: string;
  html?: string;
}

/** What to answer instead of accepting. `drop` closes the socket without a reply. */
export type SmtpAnswer =
  | { code: number; message?: string; stage?: 'rcpt' | 'data' }
  | { drop: true; stage?: 'rcpt' | 'data' }
  | { delayMs: number };

export interface TestSmtpServer {
  /** `smtp://` (or `smtps://`) URL with the credentials, ready for SMTP_URL. */
  url: string;
  port: number;
  received: ReceivedMail[];
  /**
   * The client's command lines as they arrived (`MAIL FROM:<…>`, credentials redacted), which the
   * envelope above gives decoded (a punycode domain in Unicode). Not kept by an `smtps://` server.
   */
  commands: string[];
  /** Answers the next `times` (default 1) messages to `recipient` with `answer`. */
  script(recipient: string, answer: SmtpAnswer, times?: number): void;
  close(): Promise<void>;
}

interface Scripted {
  recipient: string;
  answer: SmtpAnswer;
  left: number;
}

export async function startSmtpServer(options: { user?: string; password?: string; secure?: boolean } = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const scripted: Scripted[] = [];
  const users = new Map<string, string | undefined>();
  const commands: string[] = [];
  const ignore = () => {};
  // smtp-server logs each command line at debug level ('C:', line). A logger on a server that
  // terminates TLS itself would make it warn about its built-in certificate.
  const logger = options.secure
    ? false
    : { debug: (entry: { tnx?: string }, _prefix: string, line: string) => void (entry.tnx === 'command' && commands.push(String(line))), trace: ignore, info: ignore, warn: ignore, error: ignore, fatal: ignore };

  /** The scripted answer for this session's recipients at this stage, used up once taken. */
  function take(recipients: string[], stage: 'rcpt' | 'data'): SmtpAnswer | undefined {
    const entry = scripted.find(
      (s) => s.left > 0 && recipients.includes(s.recipient.toLowerCase()) && ('delayMs' in s.answer ? stage === 'data' : (s.answer.stage ?? 'rcpt') === stage),
    );
    if (!entry) return undefined;
    entry.left -= 1;
    return entry.answer;
  }

  function drop(session: SMTPServerSession): void {
    for (const connection of server.connections) {
      if (connection.id === session.id) connection._socket.destroy();
    }
  }

  function refusal(answer: { code: number; message?: string }, recipient: string): Error {
    const defaults: Record<number, string> = {
      550: `5.1.1 <${recipient}>: Recipient address rejected: User unknown`,
      451: '4.3.0 Temporary local problem, try again later',
    };
    return Object.assign(new Error(answer.message ?? defaults[answer.code] ?? 'Refused'), { responseCode: answer.code });
  }

  const server = new SMTPServer({
    secure: options.secure ?? false,
    logger: logger as false,
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: options.user ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    onAuth(auth, session, callback) {
      if (auth.username !== options.user || auth.password !== options.password) {
        return callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
      }
      users.set(session.id, auth.username);
      callback(null, { user: auth.username });
    },
    onRcptTo(address, session, callback) {
      const answer = take([address.address.toLowerCase()], 'rcpt');
      if (answer && 'drop' in answer) return drop(session);
      if (answer && 'code' in answer) return callback(refusal(answer, address.address));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const recipients = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const answer = take(recipients, 'data');
        if (answer && 'drop' in answer) return drop(session);
        if (answer && 'code' in answer) return callback(refusal(answer, recipients[0]));
        if (answer && 'delayMs' in answer) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail = parseMail(raw);
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: users.get(session.id),
          raw,
          ...mail,
        });
        callback(null, `2.0.0 Ok: queued as M${received.length}`);
      });
    },
  });

  // A client dropping mid-session (a SIGKILLed worker) is that client's problem, as on a real MTA;
  // unheard, smtp-server's 'error' event would crash the test process.
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  const credentials = options.user ? `${encodeURIComponent(options.user)}:${encodeURIComponent(options.password ?? '')}@` : '';
  const url = options.secure ? `smtps://${credentials}127.0.0.1:${port}?tls.rejectUnauthorized=false` : `smtp://${credentials}127.0.0.1:${port}`;

  return {
    url,
    port,
    received,
    commands,
    script(recipient, answer, times = 1) {
      scripted.push({ recipient, answer, left: times });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of server.connections) connection._socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// --- minimal MIME reading: enough to assert on what nodemailer produced ---

function splitHead(raw: string): { head: Record<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const headText = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const head: Record<string, string> = {};
  // Unfolding removes only the line break; the whitespace after it belongs to the value.
  for (const line of headText.replace(/\r?\n(?=[ \t])/g, '').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    head[name] ??= line.slice(colon + 1).trim();
  }
  return { head, body };
}

function decodeBody(body: string, encoding: string | undefined, charset = 'utf-8'): string {
  const enc = (encoding ?? '7bit').toLowerCase();
  if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString(charset as BufferEncoding);
  if (enc === 'quoted-printable') return decodeQuotedPrintable(body);
  return body.replace(/\r?\n$/, '');
}

function decodeQuotedPrintable(text: string): string {
  // Spaces before a soft break are content (RFC 2045 6.7 rule 3), only `=` + CRLF goes.
  const soft = text.replace(/=\r?\n/g, '').replace(/\r?\n$/, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

export function decodeEncodedWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_all, _charset: string, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}

function param(value: string | undefined, name: string): string | undefined {
  const match = value ? new RegExp(`;\\s*${name}="?([^";]+)"?`, 'i').exec(value) : null;
  return match?.[1];
}

/** Depth-first over multipart bodies, keeping the first text/plain and text/html leaves. */
function collectParts(head: Record<string, string>, body: string, out: { text?: string; html?: string }): void {
  const type = (head['content-type'] ?? 'text/plain').split(';')[0].trim().toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = param(head['content-type'], 'boundary');
    if (!boundary) return;
    const sections = body.split(`--${boundary}`).slice(1);
    for (const section of sections) {
      if (section.startsWith('--')) break;
      const part = splitHead(section.replace(/^\r?\n/, ''));
      collectParts(part.head, part.body.replace(/\r?\n$/, ''), out);
    }
    return;
  }
  const decoded = decodeBody(body, head['content-transfer-encoding'], param(head['content-type'], 'charset')?.toLowerCase());
  // Mail lines end in CRLF on the wire; tests compare with the LF text that was sent.
  if (type === 'text/plain') out.text ??= decoded.replace(/\r\n/g, '\n');
  if (type === 'text/html') out.html ??= decoded.replace(/\r\n/g, '\n');
}

export function parseMail(raw: string): Omit<ReceivedMail, 'from' | 'to' | 'user' | 'raw'> {
  const { head, body } = splitHead(raw);
  const parts: { text?: string; html?: string } = {};
  collectParts(head, body, parts);
  return {
    headers: head,
    subject: decodeEncodedWords(head.subject ?? ''),
    contentType: (head['content-type'] ?? 'text/plain').split(';')[0].trim().toLowerCase(),
    ...parts,
  };
}
