import os from 'node:os';
import { domainToASCII } from 'node:url';
import { encodeWord } from 'nodemailer/lib/mime-funcs';
import nodemailer, { type NodemailerError, type SMTPPoolSentMessageInfo, type Transporter } from 'nodemailer';
import type { ChannelProvider, OutboundMessage, SendOutcome } from './provider.js';
import { redactContact } from './redact-contact.js';

export interface SmtpOptions {
  /** `smtp://user:pass@host:port` or `smtps://…`; query parameters reach nodemailer (`?tls.rejectUnauthorized=false`). */
  url: string;
  /** `Name <address>` or a bare address. */
  from: string;
  maxConnections?: number;
}

/** Errors that come without an SMTP reply and will not go away by trying again. */
const PERMANENT_CODES = new Set(['EENVELOPE', 'EMESSAGE', 'ECONFIG', 'EMAXRECIPIENTS', 'EREQUIRETLS', 'EFILEACCESS', 'EURLACCESS']);
const AUTH_CODES = new Set(['EAUTH', 'ENOAUTH']);
/** The commands whose 5xx answer is about the recipient or the message: a bounce. */
const RECIPIENT_COMMANDS = new Set(['RCPT TO', 'DATA']);

/**
 * Email over SMTP through a nodemailer connection pool.
 *
 * | What happened                                        | Outcome   |
 * |------------------------------------------------------|-----------|
 * | message accepted (2xx after DATA)                    | delivered |
 * | 5xx to RCPT TO or DATA (except 503, and 552 to RCPT) | bounced   |
 * | 5xx to MAIL FROM: the server refuses EMAIL_FROM      | failed    |
 * | 5xx to the connection, EHLO/HELO or another command   | failed    |
 * |   of the session: the server refuses this gateway     |           |
 * | authentication refused, or no credentials            | failed    |
 * | 4xx (but 421) to RCPT TO or DATA, 552 to RCPT TO:    | retry,    |
 * |   a soft bounce (a full mailbox, greylisting)        | bounced   |
 * |                                                      | when the  |
 * |                                                      | retries   |
 * |                                                      | run out   |
 * | other 4xx, 503, connection refused/closed/timed out, | retry     |
 * |   TLS                                                |           |
 * | address or message nodemailer cannot send            | failed    |
 */
export class SmtpProvider implements ChannelProvider {
  readonly name = 'smtp';
  private readonly transport: Transporter<SMTPPoolSentMessageInfo>;
  private readonly domain: string;

  /** One message per pooled connection at a time. */
  readonly maxConcurrency: number;

  constructor(private readonly options: SmtpOptions) {
    this.domain = fromDomain(options.from);
    this.maxConcurrency = options.maxConnections ?? poolSizeIn(options.url) ?? 5;
    this.transport = nodemailer.createTransport({
      pool: true,
      url: options.url,
      // Credentials never cross the network in clear: STARTTLS is required for them (the URL's own
      // `requireTLS`, `smtps://` or a server on this machine aside).
      ...(credentialsNeedTls(options.url) ? { requireTLS: true } : {}),
      maxConnections: this.maxConcurrency,
      // One immediate retry on a fresh connection covers a pooled connection the server closed
      // while idle; anything longer is the delivery worker's backoff to decide.
      maxRequeues: 1,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 60_000,
      logger: false,
    });
  }

  async send(message: OutboundMessage): Promise<SendOutcome> {
    try {
      const info = await this.transport.sendMail({
        from: this.options.from,
        to: message.to,
        subject: subjectHeader(message.subject ?? ''),
        text: message.text,
        html: message.html,
        headers: message.headers,
        messageId: message.messageId ? `<${message.messageId}@${this.domain}>` : undefined,
      });
      return { kind: 'delivered', providerResponse: redactContact(String(info.response), 'email', message.to) };
    } catch (error) {
      return smtpOutcome(error as NodemailerError, message.to);
    }
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/**
 * The Subject as nodemailer is to write it. nodemailer passes text that already reads as an RFC
 * 2047 encoded-word (`=?UTF-8?B?SGk=?=`) through as it is, for callers who encode their own
 * headers, so a subject that only looks like one would reach the reader decoded into other text.
 * Such a subject is encoded whole here, as RFC 2047 §5 asks of text that could be mistaken for
 * an encoded-word.
 */
export function subjectHeader(subject: string): string {
  if (subject.includes('=?')) return encodeWord(subject, 'B', 52);
  // nodemailer folds a header only between words: a word near 998 characters long would make a
  // line longer than RFC 5322 allows (998 with the fold's space). Encoded-words split it.
  if (/\S{900}/.test(subject)) return encodeWord(subject, 'Q', 52);
  return subject;
}

/**
 * Whether the URL gives credentials for a plain `smtp://` connection to another host without
 * saying whether TLS is required: nodemailer would then send them in clear to a server that
 * offers no STARTTLS.
 */
export function credentialsNeedTls(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'smtp:' || (!parsed.username && !parsed.password)) return false;
  if (parsed.searchParams.has('requireTLS') || parsed.searchParams.has('ignoreTLS')) return false;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return !(host === 'localhost' || host === '::1' || /^127\./.test(host));
}

/** A query parameter of an SMTP URL (nodemailer reads its options there); null when absent or when the URL does not parse (refused at start-up). */
function urlParameter(url: string, name: string): string | null {
  try {
    return new URL(url).searchParams.get(name);
  } catch {
    return null;
  }
}

/** The pool size an SMTP URL asks for (`?maxConnections=`, which nodemailer reads), if any. */
export function poolSizeIn(url: string): number | undefined {
  const asked = urlParameter(url, 'maxConnections');
  const size = Number(asked);
  return asked !== null && Number.isInteger(size) && size > 0 ? size : undefined;
}

/**
 * The name the gateway greets an SMTP server with (EHLO), as nodemailer picks it: the URL's
 * `?name=`, else this machine's host name when it is fully qualified, else the address literal
 * `[127.0.0.1]`, whatever address the connection comes from.
 */
export function ehloName(url: string, hostname: string = os.hostname()): string {
  const named = urlParameter(url, 'name');
  if (named) return named;
  return hostname.includes('.') ? hostname : '[127.0.0.1]';
}

/**
 * The domain of the From address, which the Message-ID borrows as RFC 5322 suggests, in its ASCII
 * form (`bücher.example` is `xn--bcher-kva.example`): a msg-id is ASCII, as nodemailer writes the
 * From address itself.
 */
export function fromDomain(from: string): string {
  const address = /<([^<>]*)>\s*$/.exec(from)?.[1] ?? from;
  const domain = address.slice(address.lastIndexOf('@') + 1).trim();
  return (domain && domainToASCII(domain)) || 'localhost';
}

export function smtpOutcome(error: NodemailerError, to: string): SendOutcome {
  const code = error.code ?? 'ERROR';
  const reply = error.response ? redactContact(error.response, 'email', to) : undefined;
  if (AUTH_CODES.has(code)) {
    return { kind: 'failed', error: `SMTP authentication failed, check the credentials in SMTP_URL${reply ? `: ${reply}` : ''}`, providerResponse: reply, setup: true };
  }
  const status = error.responseCode;
  if (status && reply) {
    // 552 to RCPT TO is a full mailbox, which RFC 5321 (4.5.3.1.10) asks to treat as 452.
    const fullMailbox = status === 552 && error.command === 'RCPT TO';
    if (status >= 500 && status !== 503 && !fullMailbox) {
      if (error.command === 'STARTTLS') {
        return {
          kind: 'failed',
          error: `SMTP server offers no STARTTLS, and the credentials in SMTP_URL are not sent in clear: use smtps://, or add ?requireTLS=false to send them unencrypted: ${reply}`,
          providerResponse: reply,
          setup: true,
        };
      }
      if (error.command === 'MAIL FROM') return { kind: 'failed', error: `SMTP server refused the sender (EMAIL_FROM): ${reply}`, providerResponse: reply, setup: true };
      if (error.command && RECIPIENT_COMMANDS.has(error.command)) return { kind: 'bounced', error: `SMTP ${status} to ${error.command}: ${reply}`, providerResponse: reply };
      // A refusal of the session (a blocklisted address, a rejected HELO) is the gateway's, not the recipient's.
      return { kind: 'failed', error: `SMTP server refused this gateway (${error.command ?? 'session'}), check SMTP_URL and the sending host: ${reply}`, providerResponse: reply, setup: true };
    }
    // nodemailer names a reply to no command of its own (a greeting, a 421 that ends the session) CONN.
    const error421 = status === 421 ? `SMTP 421, the server is closing the session: ${reply}` : undefined;
    const stage = !error.command || error.command === 'CONN' ? 'the session' : error.command;
    const outcome: SendOutcome = { kind: 'retry', error: error421 ?? `SMTP ${status} to ${stage}: ${reply}`, providerResponse: reply };
    // 421 is the server closing the session, about itself; other 4xx here defer this recipient or message.
    if (fullMailbox || (status >= 400 && status < 500 && status !== 421 && error.command && RECIPIENT_COMMANDS.has(error.command))) outcome.softBounce = true;
    return outcome;
  }
  const detail = redactContact(error.message, 'email', to);
  const cause = error.originalCode && error.originalCode !== code ? ` (${error.originalCode})` : '';
  if (PERMANENT_CODES.has(code)) return { kind: 'failed', error: `SMTP ${code}: ${detail}` };
  return { kind: 'retry', error: `SMTP ${code}${cause}: ${detail}` };
}
