import type { Channel } from './provider.js';

const EMAIL_LIKE = /[^\s<>"'(),;:[\]]+@[^\s<>"'(),;:[\]]+/g;
const PHONE_LIKE = /\+\d[\d ()-]{5,}\d/g;
const PERCENT_ESCAPE = /%([0-9A-Fa-f]{2})/g;

/** The fewest digits a recipient's number needs to be looked for in any format (fewer would mask unrelated numbers). */
const IDENTIFYING_DIGITS = 7;

/**
 * A pattern for the recipient's own number written any way: its last up-to-10 digits, with or
 * without the country code before them, up to three separators between any two digits ("(415)
 * 555-0166", "415.555.0166", "1 415 555 0166"), not inside a longer run of digits. Numbers that
 * are not the recipient's stay.
 */
function recipientNumber(to: string): RegExp | undefined {
  const digits = to.replace(/\D/g, '');
  if (digits.length < IDENTIFYING_DIGITS) return undefined;
  const spaced = (part: string) => [...part].join('\\D{0,3}');
  const national = digits.slice(-10);
  const country = digits.slice(0, -10);
  const prefix = country ? `(?:${spaced(country)}\\D{0,3})?` : '';
  return new RegExp(`(?<!\\d)${prefix}${spaced(national)}(?!\\d)`, 'g');
}

/** The fewest characters of a mailbox name that are looked for alone (fewer would mask common words). */
const IDENTIFYING_MAILBOX = 4;

/**
 * Words SMTP servers write in their own answers ("User unknown", "Recipient address rejected"): a
 * mailbox of that name is not looked for alone, which would mask the reason and identify no one.
 */
const SMTP_WORDS = new Set(['user', 'address', 'mailbox', 'recipient', 'account', 'unknown', 'rejected', 'denied', 'domain', 'relay', 'mail', 'email', 'message', 'quota', 'storage', 'later', 'blocked', 'sender', 'postmaster', 'service']);

/**
 * The recipient's mailbox name (before the `@`) standing alone, in any case: a server may quote it
 * without its domain ("mailbox alice.smith unknown", "alice.smith at example.com").
 */
function recipientMailbox(to: string): RegExp | undefined {
  const mailbox = to.slice(0, to.lastIndexOf('@'));
  if (mailbox.length < IDENTIFYING_MAILBOX || SMTP_WORDS.has(mailbox.toLowerCase())) return undefined;
  const literal = mailbox.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w.+-])${literal}(?![\\w+-]|\\.\\w)`, 'gi');
}

/**
 * Provider errors and responses are stored with the attempt and shown to the protocol, which must
 * never learn a contact value. Providers echo it back in their own words and formats ("550
 * <a@b.c>: unknown user", "The 'To' number +1 (415) 555-0166 is not valid (14155550166)",
 * "To=%2B1415…"), so the text is percent-decoded, and anything shaped like the channel's contacts
 * is masked: the exact value sent, any email address and the recipient's mailbox name alone, any
 * +number, and the recipient's own number in any format.
 */
export function redactContact(text: string, channel: Channel, to: string): string {
  // Printable ASCII only: a decoded control character (%00) could not even be stored.
  let out = text.replace(PERCENT_ESCAPE, (escape, hex: string) => {
    const code = parseInt(hex, 16);
    return code >= 0x20 && code <= 0x7e ? String.fromCharCode(code) : escape;
  });
  // A very short value (a test chat id like "42") would mask unrelated digits.
  if (to.length >= 5) out = out.split(to).join('[recipient]');
  if (channel === 'email') {
    out = out.replace(EMAIL_LIKE, '[address]');
    const own = recipientMailbox(to);
    if (own) out = out.replace(own, '[recipient]');
  }
  if (channel === 'sms') {
    const own = recipientNumber(to);
    out = out.replace(PHONE_LIKE, '[number]');
    if (own) out = out.replace(own, '[number]');
  }
  return out;
}

/**
 * A provider's answer with the provider's credentials masked and then the recipient's contact
 * (redactContact). The secrets are masked both before and after the percent-decoding redactContact
 * does, so an answer that echoes one encoded (`/bot123%3AAAH…/sendMessage`) shows it no more than
 * one that echoes it as it is.
 */
export function redactProviderText(text: string, secrets: readonly string[], channel: Channel, to: string): string {
  const hide = (value: string) => secrets.reduce((out, secret) => (secret ? out.split(secret).join('[token]') : out), value);
  return hide(redactContact(hide(text), channel, to));
}
