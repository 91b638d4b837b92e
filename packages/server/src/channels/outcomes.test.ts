import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodemailerError } from 'nodemailer';
import { fromDomain, poolSizeIn, SmtpProvider, smtpOutcome } from './email.js';
import { retryAfterMs, twilioOutcome } from './sms.js';
import { telegramOutcome } from './telegram.js';

function smtpError(fields: Partial<NodemailerError> & { message?: string }): NodemailerError {
  return Object.assign(new Error(fields.message ?? 'failed'), fields) as NodemailerError;
}

describe('SMTP outcome mapping', () => {
  const to = 'alice@example.com';
  it('bounces on 5xx to RCPT TO or DATA, retries on 4xx and 503', () => {
    assert.equal(smtpOutcome(smtpError({ code: 'EENVELOPE', responseCode: 550, response: '550 no such user', command: 'RCPT TO' }), to).kind, 'bounced');
    assert.equal(smtpOutcome(smtpError({ code: 'EMESSAGE', responseCode: 552, response: '552 too big', command: 'DATA' }), to).kind, 'bounced');
    assert.equal(smtpOutcome(smtpError({ code: 'EENVELOPE', responseCode: 421, response: '421 closing', command: 'RCPT TO' }), to).kind, 'retry');
    for (const command of ['RCPT TO', 'CONN']) {
      const closing = smtpOutcome(smtpError({ code: 'EENVELOPE', responseCode: 421, response: '421 4.7.0 Try again later', command }), to);
      assert.equal(closing.kind === 'retry' && closing.error, 'SMTP 421, the server is closing the session: 421 4.7.0 Try again later');
    }
    const greeting = smtpOutcome(smtpError({ code: 'EPROTOCOL', responseCode: 450, response: '450 busy', command: 'CONN' }), to);
    assert.equal(greeting.kind === 'retry' && greeting.error, 'SMTP 450 to the session: 450 busy');
    assert.equal(smtpOutcome(smtpError({ code: 'EENVELOPE', responseCode: 503, response: '503 bad sequence', command: 'RCPT TO' }), to).kind, 'retry');
  });

  it('marks a 4xx to RCPT TO or DATA (but 421) as a soft bounce, retried until the retries run out', () => {
    const soft = (responseCode: number, command: string) => {
      const outcome = smtpOutcome(smtpError({ code: 'EENVELOPE', responseCode, response: `${responseCode} later`, command }), to);
      assert.equal(outcome.kind, 'retry', `${responseCode} ${command}`);
      return outcome.kind === 'retry' && outcome.softBounce === true;
    };
    assert.equal(soft(452, 'RCPT TO'), true, 'mailbox full');
    assert.equal(soft(450, 'RCPT TO'), true, 'greylisted');
    assert.equal(soft(451, 'DATA'), true);
    assert.equal(soft(421, 'RCPT TO'), false, 'the server closing the session');
    assert.equal(soft(451, 'MAIL FROM'), false, 'about the sender');
    assert.equal(soft(421, 'CONN'), false);
    assert.equal(soft(503, 'RCPT TO'), false);
  });

  it('fails without bouncing when the sender or the credentials are refused', () => {
    const sender = smtpOutcome(smtpError({ code: 'EENVELOPE', responseCode: 553, response: '553 sender not allowed', command: 'MAIL FROM' }), to);
    assert.equal(sender.kind, 'failed');
    assert.match(sender.kind === 'failed' ? sender.error : '', /EMAIL_FROM/);
    assert.equal(smtpOutcome(smtpError({ code: 'EAUTH', responseCode: 535, response: '535 bad', command: 'AUTH PLAIN' }), to).kind, 'failed');
    assert.equal(smtpOutcome(smtpError({ code: 'ENOAUTH' }), to).kind, 'failed');
  });

  it('fails without bouncing when the server refuses the session itself (connection, HELO)', () => {
    for (const [command, response] of [
      ['CONN', '554 5.7.1 Client host [127.0.0.1] blocked using zen.spamhaus.org'],
      ['EHLO', '550 5.7.1 Helo command rejected'],
      ['HELO', '550 5.7.1 Helo command rejected'],
    ]) {
      const outcome = smtpOutcome(smtpError({ code: 'EPROTOCOL', responseCode: Number(response.slice(0, 3)), response, command }), to);
      assert.equal(outcome.kind, 'failed', command);
      assert.match(outcome.kind === 'failed' ? outcome.error : '', /refused this gateway .*check SMTP_URL/);
    }
  });

  it('retries connection-level errors and unknown ones', () => {
    for (const code of ['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS', 'EPROTOCOL', 'ESOMETHINGNEW']) {
      assert.equal(smtpOutcome(smtpError({ code }), to).kind, 'retry', code);
    }
    assert.equal(smtpOutcome(smtpError({ code: 'EENVELOPE', message: `Invalid recipient "${to}"` }), to).kind, 'failed');
  });

  it("carries as many sends at once as the pool has connections, SMTP_URL's maxConnections included", async () => {
    assert.equal(poolSizeIn('smtp://u:p@mail.example:587/?maxConnections=2'), 2);
    assert.equal(poolSizeIn('smtp://mail.example:587'), undefined);
    assert.equal(poolSizeIn('smtp://mail.example/?maxConnections=zero'), undefined);
    for (const [url, size] of [
      ['smtp://127.0.0.1:2525/?maxConnections=2', 2],
      ['smtp://127.0.0.1:2525', 5],
    ] as const) {
      const provider = new SmtpProvider({ url, from: 'Herald <n@herald.test>' });
      assert.equal(provider.maxConcurrency, size, url);
      await provider.close();
    }
  });

  it('takes the Message-ID domain from the From address', () => {
    assert.equal(fromDomain('Herald <notifications@herald.local>'), 'herald.local');
    assert.equal(fromDomain('alerts@mail.acme.example'), 'mail.acme.example');
  });
});

describe('Telegram outcome mapping', () => {
  it('covers the Bot API answers', () => {
    assert.deepEqual(telegramOutcome(200, { ok: true, result: { message_id: 9 } }), { kind: 'delivered', providerResponse: 'message_id 9' });
    assert.equal(telegramOutcome(429, { ok: false, description: 'Too Many Requests' }).kind, 'retry');
    assert.equal('retryAfterMs' in telegramOutcome(429, { ok: false }), false);
    assert.equal(telegramOutcome(403, { ok: false, description: 'Forbidden: bot was kicked from the group chat' }).kind, 'failed');
    assert.match(JSON.stringify(telegramOutcome(401, { ok: false, description: 'Unauthorized' })), /TELEGRAM_BOT_TOKEN/);
    assert.equal(telegramOutcome(502, undefined).kind, 'retry');
    assert.equal(telegramOutcome(200, undefined).kind, 'retry');
  });
});

describe('Twilio outcome mapping', () => {
  it('honours Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000);
    assert.equal(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now), 0);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs(null, now), undefined);
    const outcome = twilioOutcome(503, { code: 20503, message: 'Service Unavailable' }, '5', now);
    assert.equal(outcome.kind === 'retry' && outcome.retryAfterMs, 5000);
  });

  it('fails on 404 (unknown account) and on 403', () => {
    assert.equal(twilioOutcome(404, { code: 20404, message: 'Not found' }, null).kind, 'failed');
    assert.match(JSON.stringify(twilioOutcome(403, { code: 20003, message: 'Suspended' }, null)), /TWILIO_ACCOUNT_SID/);
  });
});
