import type { SecretBox } from '../crypto/secret-box.js';
import type { Queryable } from '../db/connection.js';

export interface Contacts {
  email?: string;
  phone?: string;
  telegramChatId?: string;
}

/** A wallet's verified contacts, opened on first read, with the stored (sealed) form of each. */
export type WalletContacts = Contacts & { hasPhone: boolean; sealed: Contacts };

/**
 * Verified contacts of each wallet, in one query for a whole batch. Each contact is decrypted when
 * first read: a send needs one channel's contact, and whether a phone exists is known unopened.
 */
export async function loadContactsFor(db: Queryable, secrets: SecretBox, wallets: string[]): Promise<Map<string, WalletContacts>> {
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
  return new Map(rows.map((row) => [row.wallet, sealedContacts(secrets, row.email_enc, row.phone_enc, row.telegram_chat_enc)]));
}

/** Contacts whose values are decrypted on first read. */
function sealedContacts(secrets: SecretBox, email: string | null, phone: string | null, telegram: string | null): WalletContacts {
  const opened = new Map<string, string>();
  const open = (sealed: string | null) => {
    if (!sealed) return undefined;
    let value = opened.get(sealed);
    if (value === undefined) opened.set(sealed, (value = secrets.decrypt(sealed)));
    return value;
  };
  return {
    hasPhone: phone !== null,
    sealed: { email: email ?? undefined, phone: phone ?? undefined, telegramChatId: telegram ?? undefined },
    get email() {
      return open(email);
    },
    get phone() {
      return open(phone);
    },
    get telegramChatId() {
      return open(telegram);
    },
  };
}
