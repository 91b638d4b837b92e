import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { credentialsNeedTls, ehloName, SmtpProvider } from '../../packages/server/src/channels/email.js';
import type { OutboundMessage } from '../../packages/server/src/channels/provider.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

const FROM = 'Herald Alerts <alerts@mail.herald.test>';

function email(to: string, extra: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    channel: 'email',
    to,
    subject: 'Liquidation warning',
    text: 'Your position is at risk.',
    html: '<p>Your position is at risk.</p>',
    meta: { protocolId: 'proto_test', wallet: 'W', environment: 'production' },
    ...extra,
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('SMTP provider', () => {
  let smtp: TestSmtpServer;
  let provider: SmtpProvider;

  before(async () => {
    smtp = await startSmtpServer({ user: 'herald', password: 'p@ss:word/1' });
    provider = new SmtpProvider({ url: smtp.url, from: FROM });
  });
  after(async () => {
    await provider.close();
    await smtp.close();
  });

  it('sends html and text parts with Message-ID, From and the unsubscribe headers', async () => {
    const html = '<h1>Position at risk</h1><p>Health factor <strong>1.02</strong> — top up &amp; stay safe. ' + 'x'.repeat(200) + '</p>';
    const text = 'Position at risk\n\nHealth factor 1.02 — top up & stay safe. ' + 'x'.repeat(200) + '\n.\nA line with a lone dot above.';
    const unsubscribe = '<https://herald.test/u/01JABCDEFGHJKMNPQRSTVWXYZ0.c2lnbmF0dXJlLXRoYXQtaXMtcmF0aGVyLWxvbmctdG8tZm9yY2UtZm9sZGluZw>';
    const outcome = await provider.send(
      email('alice@example.com', {
        subject: 'Liquidation warning ⚠️ for 7xKX…',
        text,
        html,
        messageId: '01JABCDEFGHJKMNPQRSTVWXYZ0',
        headers: { 'List-Unsubscribe': unsubscribe, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      }),
    );
    assert.equal(outcome.kind, 'delivered');
    assert.match((outcome as { providerResponse: string }).providerResponse, /^250 2\.0\.0 Ok: queued as M\d+$/);

    const mail = smtp.received.at(-1)!;
    assert.equal(mail.user, 'herald', 'authenticated with the credentials of SMTP_URL');
    assert.equal(mail.from, 'alerts@mail.herald.test');
    assert.deepEqual(mail.to, ['alice@example.com']);
    assert.equal(mail.headers['message-id'], '<01JABCDEFGHJKMNPQRSTVWXYZ0@mail.herald.test>');
    assert.match(mail.headers.from, /^"?Herald Alerts"? <alerts@mail\.herald\.test>$/);
    assert.equal(mail.headers.to, 'alice@example.com');
    assert.equal(mail.headers['list-unsubscribe'], unsubscribe);
    assert.equal(mail.headers['list-unsubscribe-post'], 'List-Unsubscribe=One-Click');
    assert.equal(mail.subject, 'Liquidation warning ⚠️ for 7xKX…');
    assert.equal(mail.contentType, 'multipart/alternative');
    assert.equal(mail.text, text);
    assert.equal(mail.html, html);
  });

  it('lets nodemailer make a Message-ID when the message has none', async () => {
    const outcome = await provider.send(email('bob@example.com'));
    assert.equal(outcome.kind, 'delivered');
    assert.match(smtp.received.at(-1)!.headers['message-id'], /^<[^@\s]+@mail\.herald\.test>$/);
  });

  it('sends a subject that looks like an encoded-word as the text it is', async () => {
    for (const subject of ['=?UTF-8?B?SGk=?= encoded-word lookalike', `Rate =?utf-8?q?x?= ${'é'.repeat(120)}`]) {
      const outcome = await provider.send(email('carol@example.com', { subject }));
      assert.equal(outcome.kind, 'delivered');
      assert.equal(smtp.received.at(-1)!.subject, subject);
    }
  });

  it('keeps every line within 998 octets when the subject is one 998-character word', async () => {
    for (const subject of ['X'.repeat(998), `https://example.com/${'y'.repeat(978)}`, `Claim ${'z'.repeat(990)}`]) {
      const outcome = await provider.send(email('erin@example.com', { subject }));
      assert.equal(outcome.kind, 'delivered');
      const mail = smtp.received.at(-1)!;
      assert.equal(mail.subject, subject);
      const longest = Math.max(...mail.raw.split('\r\n').map((line) => Buffer.byteLength(line)));
      assert.ok(longest <= 998, `a line of ${longest} octets`);
    }
  });

  it('writes the Message-ID and the envelope with the domains in their ASCII form', async () => {
    const idn = new SmtpProvider({ url: smtp.url, from: 'Hérald Ops <alerts@bücher.example>' });
    try {
      const outcome = await idn.send(email('dave@example.com', { messageId: '01JABCDEFGHJKMNPQRSTVWXYZ1' }));
      assert.equal(outcome.kind, 'delivered');
      const mail = smtp.received.at(-1)!;
      assert.equal(mail.headers['message-id'], '<01JABCDEFGHJKMNPQRSTVWXYZ1@xn--bcher-kva.example>');
      assert.match(mail.headers.from, /<alerts@xn--bcher-kva\.example>$/);
      // The envelope too, which a server without SMTPUTF8 could not read as written.
      assert.ok(smtp.commands.includes('MAIL FROM:<alerts@xn--bcher-kva.example>'), smtp.commands.join('\n'));
      assert.ok(!smtp.commands.some((line) => line.includes('bücher')), smtp.commands.join('\n'));
      // The greeting is the name ehloName says (the start-up warning relies on it).
      assert.ok(smtp.commands.includes(`EHLO ${ehloName(smtp.url)}`), smtp.commands.join('\n'));
    } finally {
      await idn.close();
    }
  });

  it('sends concurrent messages over the pool', async () => {
    const before = smtp.received.length;
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => provider.send(email(`user${i}@example.com`, { messageId: `M${i}` }))));
    assert.ok(outcomes.every((o) => o.kind === 'delivered'));
    const got = smtp.received.slice(before).map((m) => m.headers['message-id']).sort();
    assert.deepEqual(got, Array.from({ length: 20 }, (_, i) => `<M${i}@mail.herald.test>`).sort());
  });

  it('maps 550 to RCPT TO to bounced, without the address in what it reports', async () => {
    const before = smtp.received.length;
    smtp.script('gone@example.com', { code: 550 });
    const outcome = await provider.send(email('gone@example.com'));
    assert.equal(outcome.kind, 'bounced');
    assert.match(outcome.kind === 'bounced' ? outcome.error : '', /^SMTP 550 to RCPT TO: 550 5\.1\.1 .*User unknown/);
    assert.doesNotMatch(JSON.stringify(outcome), /gone@example\.com/);
    assert.equal(smtp.received.length, before, 'nothing was accepted');
  });

  it('maps 554 after DATA to bounced', async () => {
    smtp.script('spamtrap@example.com', { code: 554, message: '5.7.1 Message rejected as spam', stage: 'data' });
    const outcome = await provider.send(email('spamtrap@example.com'));
    assert.equal(outcome.kind, 'bounced');
    assert.match(JSON.stringify(outcome), /554 5\.7\.1 Message rejected as spam/);
  });

  it('maps 451 to retry, and the next attempt goes through', async () => {
    smtp.script('busy@example.com', { code: 451 });
    const outcome = await provider.send(email('busy@example.com'));
    assert.equal(outcome.kind, 'retry');
    assert.match(outcome.kind === 'retry' ? outcome.error : '', /^SMTP 451 to RCPT TO: 451 4\.3\.0/);
    assert.equal((await provider.send(email('busy@example.com'))).kind, 'delivered');
  });

  it('maps 552 to RCPT TO (a full mailbox) to a soft bounce, as RFC 5321 asks', async () => {
    smtp.script('overquota@example.com', { code: 552, message: '5.2.2 Mailbox full' });
    const outcome = await provider.send(email('overquota@example.com'));
    assert.equal(outcome.kind, 'retry');
    assert.equal(outcome.kind === 'retry' && outcome.softBounce, true);
    assert.match(outcome.kind === 'retry' ? outcome.error : '', /^SMTP 552 to RCPT TO: 552 5\.2\.2 Mailbox full/);
  });

  it('maps a 4xx after DATA to retry', async () => {
    smtp.script('later@example.com', { code: 452, message: '4.3.1 Insufficient system storage', stage: 'data' });
    assert.equal((await provider.send(email('later@example.com'))).kind, 'retry');
  });

  it('maps a connection the server keeps dropping to retry', async () => {
    // Twice: the pool retries once on a fresh connection by itself.
    smtp.script('drop@example.com', { drop: true, stage: 'data' }, 2);
    const outcome = await provider.send(email('drop@example.com'));
    assert.equal(outcome.kind, 'retry');
    assert.match(outcome.kind === 'retry' ? outcome.error : '', /^SMTP (ECONNECTION|ESOCKET)/);
    assert.doesNotMatch(JSON.stringify(outcome), /drop@example\.com/);
  });

  it('survives one dropped connection through the pool requeue', async () => {
    smtp.script('flaky@example.com', { drop: true, stage: 'rcpt' }, 1);
    assert.equal((await provider.send(email('flaky@example.com'))).kind, 'delivered');
  });

  it('maps a closed port to retry', async () => {
    const port = await closedPort();
    const down = new SmtpProvider({ url: `smtp://127.0.0.1:${port}`, from: FROM });
    try {
      const outcome = await down.send(email('alice@example.com'));
      assert.equal(outcome.kind, 'retry');
      assert.match(outcome.kind === 'retry' ? outcome.error : '', /ECONNREFUSED/);
    } finally {
      await down.close();
    }
  });

  it('maps refused credentials to failed, naming SMTP_URL and not the password', async () => {
    const wrong = new SmtpProvider({ url: smtp.url.replace('p%40ss', 'nope'), from: FROM });
    try {
      const outcome = await wrong.send(email('alice@example.com'));
      assert.equal(outcome.kind, 'failed');
      assert.match(outcome.kind === 'failed' ? outcome.error : '', /SMTP authentication failed, check the credentials in SMTP_URL: 535/);
      assert.doesNotMatch(JSON.stringify(outcome), /word/);
    } finally {
      await wrong.close();
    }
  });

  it('maps a server refusing the gateway itself (at the connection) to failed, not to a bounce', async () => {
    const blocking = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onConnect(_session, callback) {
        callback(Object.assign(new Error('5.7.1 Client host [127.0.0.1] blocked using zen.spamhaus.org'), { responseCode: 554 }));
      },
    });
    blocking.on('error', () => {});
    await new Promise<void>((resolve) => blocking.listen(0, '127.0.0.1', () => resolve()));
    const refused = new SmtpProvider({ url: `smtp://127.0.0.1:${(blocking.server.address() as { port: number }).port}`, from: FROM });
    try {
      const outcome = await refused.send(email('alice@example.com'));
      assert.equal(outcome.kind, 'failed');
      assert.match(outcome.kind === 'failed' ? outcome.error : '', /SMTP server refused this gateway \(CONN\), check SMTP_URL and the sending host: 554/);
    } finally {
      await refused.close();
      await new Promise<void>((resolve) => blocking.close(() => resolve()));
    }
  });

  it('maps an address nodemailer cannot use to failed', async () => {
    const outcome = await provider.send(email('not an address'));
    assert.equal(outcome.kind, 'failed');
  });
});

describe('SMTP provider over implicit TLS (smtps://)', () => {
  it('delivers', async () => {
    const smtp = await startSmtpServer({ secure: true, user: 'herald', password: 'secret' });
    const provider = new SmtpProvider({ url: smtp.url, from: 'notifications@herald.test' });
    try {
      const outcome = await provider.send(email('alice@example.com', { messageId: 'TLS1' }));
      assert.equal(outcome.kind, 'delivered');
      assert.equal(smtp.received[0].headers['message-id'], '<TLS1@herald.test>');
      assert.equal(smtp.received[0].user, 'herald');
    } finally {
      await provider.close();
      await smtp.close();
    }
  });
});

describe('SMTP credentials and TLS', () => {
  it('requires TLS for credentials sent to another host over smtp://, unless the URL says otherwise', () => {
    assert.equal(credentialsNeedTls('smtp://user:pass@mail.example.com:587'), true);
    assert.equal(credentialsNeedTls('smtp://user@mail.example.com'), true);
    assert.equal(credentialsNeedTls('smtp://mail.example.com:25'), false, 'no credentials');
    assert.equal(credentialsNeedTls('smtps://user:pass@mail.example.com'), false, 'TLS from the start');
    assert.equal(credentialsNeedTls('smtp://user:pass@mail.example.com?requireTLS=false'), false, 'the operator chose');
    assert.equal(credentialsNeedTls('smtp://user:pass@mail.example.com?ignoreTLS=true'), false, 'the operator chose');
    for (const local of ['localhost', '127.0.0.1', '127.0.0.53', '[::1]']) assert.equal(credentialsNeedTls(`smtp://u:p@${local}:2525`), false, local);
  });

  const address = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  it('does not send credentials to a server that offers no STARTTLS', { skip: address ? false : 'no non-loopback address' }, async () => {
    const auths: string[] = [];
    const plain = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        auths.push(auth.username ?? '');
        callback(null, { user: auth.username });
      },
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => callback());
      },
    });
    plain.on('error', () => {});
    await new Promise<void>((resolve) => plain.listen(0, '0.0.0.0', () => resolve()));
    const port = (plain.server.address() as { port: number }).port;
    const strict = new SmtpProvider({ url: `smtp://herald:secret@${address}:${port}`, from: FROM });
    const optedOut = new SmtpProvider({ url: `smtp://herald:secret@${address}:${port}?requireTLS=false`, from: FROM });
    try {
      const refused = await strict.send(email('alice@example.com'));
      assert.equal(refused.kind, 'failed');
      assert.match(refused.kind === 'failed' ? refused.error : '', /SMTP server offers no STARTTLS, and the credentials in SMTP_URL are not sent in clear/);
      assert.deepEqual(auths, [], 'no AUTH command was sent');
      assert.equal((await optedOut.send(email('alice@example.com'))).kind, 'delivered');
      assert.deepEqual(auths, ['herald']);
    } finally {
      await strict.close();
      await optedOut.close();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });
});
