import type { SecretBox } from '../crypto/secret-box.js';
import type { Queryable } from '../db/connection.js';

export interface Contacts {
  email?: string;
  phone?: string;
  telegramChatId?: string;
}

/** Decrypted verified contacts of each wallet, in one query for a whole batch. */
export async function loadContactsFor(db: Queryable, secrets: SecretBox, wallets: string[]): Promise<Map<string, Contacts>> {
  const rows = await db.query<{
    wallet: string;
    email_enc: string | null;
    phone_enc: string | null;
    telegram_chat_enc: string | null;
  }>(
    `SELECT wallet,
            CASE WHEN email_verified_at IS NOT NULL THEN email_enc END AS email_enc,
            CASE WHEN phone_verified_at IS NOT NULL THEN phone_enc END AS phone_enc,
            CASE WHEN telegram_linked_at IS NOT NULL THEN telegram_chat_enc END AS telegram_chat_enc
     FROM identities WHERE wallet = ANY($1::text[])`,
    [wallets],
  );
  const open = (value: string | null) => (value ? secrets.decrypt(value) : undefined);
  return new Map(
    rows.map((row) => [row.wallet, { email: open(row.email_enc), phone: open(row.phone_enc), telegramChatId: open(row.telegram_chat_enc) }]),
  );
}
