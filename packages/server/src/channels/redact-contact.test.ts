import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactContact } from './redact-contact.js';

describe('redactContact', () => {
  it('masks the address sent and anything shaped like an email address', () => {
    assert.equal(
      redactContact('550 5.1.1 <Alice@Example.com>: unknown, see postmaster@example.com', 'email', 'alice@example.com'),
      '550 5.1.1 <[address]>: unknown, see [address]',
    );
    assert.equal(redactContact('rcpt=alice.secret%40example.com refused', 'email', 'alice.secret@example.com'), 'rcpt=[recipient] refused');
    assert.equal(redactContact('250 2.0.0 Ok: queued as 4F2A1', 'email', 'alice@example.com'), '250 2.0.0 Ok: queued as 4F2A1');
  });

  it("masks the recipient's mailbox name quoted without its domain, in any case, but not inside other words", () => {
    assert.equal(
      redactContact('550 mailbox bounce.secret unknown / Bounce.Secret at example.com', 'email', 'bounce.secret@example.com'),
      '550 mailbox [recipient] unknown / [recipient] at example.com',
    );
    assert.equal(redactContact('user "alice." over quota', 'email', 'alice@example.com'), 'user "[recipient]." over quota');
    assert.equal(redactContact('malice and alice2 and alice.smith stay', 'email', 'alice@example.com'), 'malice and alice2 and alice.smith stay');
    // A name too short to identify anyone is left: it would mask common words.
    assert.equal(redactContact('bob is busy', 'email', 'bob@example.com'), 'bob is busy');
    // So is a name that is a word of the server's own answer.
    assert.equal(redactContact('550 5.1.1 Recipient address rejected: User unknown', 'email', 'user@example.com'), '550 5.1.1 Recipient address rejected: User unknown');
  });

  it('masks phone numbers however Twilio formats them, but not ids', () => {
    assert.equal(redactContact("The 'To' number +1 (415) 555-0123 is not valid", 'sms', '+14155550123'), "The 'To' number [number] is not valid");
    assert.equal(redactContact('To +14155550123 failed', 'sms', '+14155550123'), 'To [recipient] failed');
    assert.equal(redactContact('sid SM0123456789abcdef status 21610', 'sms', '+14155550123'), 'sid SM0123456789abcdef status 21610');
    // Twilio repeats the number without its +.
    assert.equal(
      redactContact("The 'To' number +14155550166 is not a valid phone number (14155550166).", 'sms', '+14155550166'),
      "The 'To' number [recipient] is not a valid phone number ([number]).",
    );
    // The recipient's own number in any format; other numbers stay.
    for (const written of ['(415) 555-0166', '415.555.0166', '1-415-555-0166', '1 415 555 0166', '4155550166', 'To=%2B14155550166', '%2B1%20415%20555%200166']) {
      const out = redactContact(`number ${written} refused`, 'sms', '+14155550166');
      assert.match(out, /^number (To=)?\(?\[(number|recipient)\] refused$/, written);
    }
    assert.equal(redactContact('at 1795671157, order 20261126, code 21211', 'sms', '+14155550166'), 'at 1795671157, order 20261126, code 21211');
    assert.equal(redactContact('bad byte %00 and %0A kept, %41 read', 'sms', '+14155550166'), 'bad byte %00 and %0A kept, A read');
  });

  it('masks a Telegram chat id only where it appears whole, and leaves short ids alone', () => {
    assert.equal(redactContact('Bad Request: chat 123456789 not found', 'telegram', '123456789'), 'Bad Request: chat [recipient] not found');
    assert.equal(redactContact('Too Many Requests: retry after 42', 'telegram', '42'), 'Too Many Requests: retry after 42');
  });
});
