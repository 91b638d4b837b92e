/**
 * Text from outside the gateway (a mail server's reply, a provider's error, an RPC node's message,
 * a webhook receiver's answer) as the database can store it: PostgreSQL's text and jsonb refuse the
 * NUL character, and one write refused would be refused again on every retry.
 */
export function storableText(text: string): string {
  return text.includes('\0') ? text.replace(/\0/g, '') : text;
}
