import type { Channel } from './provider.js';

const EMAIL_LIKE = /[^\s<>"'(),;:[\]]+@[^\s<>"'(),;:[\]]+/g;
const PHONE_LIKE = /\+\d[\d ()-]{5,}\d/g;
// A number echoed without its + ("(14155550166)"): 8 to 15 digits standing alone as a word (a
// provider's 5-digit error code, or the digits inside a message sid, stay).
const BARE_NUMBER = /(?<!\w)\d{8,15}(?!\w)/g;

/**
 * Provider errors and responses are stored with the attempt and shown to the protocol, which must
 * never learn a contact value. Providers echo it back in their own words ("550 <a@b.c>: unknown
 * user", "The 'To' number +1555… is not valid"), so anything shaped like the channel's contacts is
 * masked, not only the exact value sent.
 */
export function redactContact(text: string, channel: Channel, to: string): string {
  // A very short value (a test chat id like "42") would mask unrelated digits.
  let out = to.length >= 5 ? text.split(to).join('[recipient]') : text;
  if (channel === 'email') out = out.replace(EMAIL_LIKE, '[address]');
  if (channel === 'sms') out = out.replace(PHONE_LIKE, '[number]').replace(BARE_NUMBER, '[number]');
  return out;
}
