import type { Channel } from '../channels/provider.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Queryable } from '../db/connection.js';
import { SYSTEM_PROTOCOL } from './send-verification-code.js';

/**
 * One row per registered wallet. Contacts are SecretBox ciphertexts. A channel is reachable iff
 * its ciphertext is set AND its verified/linked timestamp is set; the send path relies on exactly that.
 */
export interface IdentityRow {
  wallet: string;
  email_enc: string | null;
  email_verified_at: Date | null;
  phone_enc: string | null;
  phone_verified_at: Date | null;
  telegram_chat_enc: string | null;
  telegram_linked_at: Date | null;
  /** A replacement of a verified email or phone, waiting for its code; the verified one still serves. */
  email_pending_enc: string | null;
  phone_pending_enc: string | null;
  created_at: Date;
  updated_at: Date;
}

export type IdentityFields = Partial<Omit<IdentityRow, 'wallet' | 'created_at' | 'updated_at'>>;

const FIELD_COLUMNS = [
  'email_enc',
  'email_verified_at',
  'email_pending_enc',
  'phone_enc',
  'phone_verified_at',
  'phone_pending_enc',
  'telegram_chat_enc',
  'telegram_linked_at',
] as const;
type FieldColumn = (typeof FIELD_COLUMNS)[number];

export async function findIdentity(db: Queryable, wallet: string, forUpdate = false): Promise<IdentityRow | undefined> {
  const [row] = await db.query<IdentityRow>(`SELECT * FROM identities WHERE wallet = $1${forUpdate ? ' FOR UPDATE' : ''}`, [wallet]);
  return row;
}

/** Creates the identity or changes only the given columns of an existing one. */
export async function saveIdentity(db: Queryable, wallet: string, fields: IdentityFields, now: Date): Promise<IdentityRow> {
  const columns = FIELD_COLUMNS.filter((column) => fields[column] !== undefined);
  const values = columns.map((column) => fields[column]);
  const placeholders = columns.map((_, i) => `$${i + 3}`);
  const updates = [...columns.map((column) => `${column} = EXCLUDED.${column}`), 'updated_at = EXCLUDED.updated_at'];
  const [row] = await db.query<IdentityRow>(
    `INSERT INTO identities (wallet, created_at, updated_at${columns.map((c) => `, ${c}`).join('')})
     VALUES ($1, $2, $2${placeholders.map((p) => `, ${p}`).join('')})
     ON CONFLICT (wallet) DO UPDATE SET ${updates.join(', ')}
     RETURNING *`,
    [wallet, now, ...values],
  );
  return row;
}

/** The columns of a contact verified by code: its value, when it was verified, its replacement waiting. */
const codedContactColumns = (channel: 'email' | 'sms') =>
  channel === 'email' ? (['email_enc', 'email_verified_at', 'email_pending_enc'] as const) : (['phone_enc', 'phone_verified_at', 'phone_pending_enc'] as const);

/**
 * Marks the contact waiting for its code verified: the replacement when one waits (it takes the
 * old value's place), otherwise the contact itself. False when there is none any more.
 */
export async function markContactVerified(db: Queryable, wallet: string, channel: 'email' | 'sms', now: Date): Promise<boolean> {
  const [enc, at, pending] = codedContactColumns(channel);
  const rows = await db.query(
    `UPDATE identities SET ${enc} = coalesce(${pending}, ${enc}), ${pending} = NULL, ${at} = $2, updated_at = $2
     WHERE wallet = $1 AND coalesce(${pending}, ${enc}) IS NOT NULL RETURNING wallet`,
    [wallet, now],
  );
  return rows.length === 1;
}

/** Whether the wallet's contact on `channel` is verified, with no replacement waiting for a code. */
export async function contactVerified(db: Queryable, wallet: string, channel: 'email' | 'sms'): Promise<boolean> {
  const [, at, pending] = codedContactColumns(channel);
  const rows = await db.query(`SELECT 1 FROM identities WHERE wallet = $1 AND ${at} IS NOT NULL AND ${pending} IS NULL`, [wallet]);
  return rows.length === 1;
}

/** Erases a wallet everywhere: identity, codes, challenges, link tokens and every subscription. */
export async function eraseWallet(db: Queryable, wallet: string): Promise<boolean> {
  const removed = await db.query('DELETE FROM identities WHERE wallet = $1 RETURNING wallet', [wallet]);
  await db.query('DELETE FROM identity_codes WHERE wallet = $1', [wallet]);
  await db.query('DELETE FROM identity_challenges WHERE wallet = $1', [wallet]);
  await db.query('DELETE FROM telegram_link_tokens WHERE wallet = $1', [wallet]);
  await db.query('DELETE FROM subscriptions WHERE wallet = $1', [wallet]);
  // Herald's own messages to the wallet (its codes, the bot's replies) where no provider was set
  // up (captured): a protocol's captures are its records of its own sends, and stay.
  await db.query('DELETE FROM captured_messages WHERE protocol_id = $1 AND wallet = $2', [SYSTEM_PROTOCOL, wallet]);
  return removed.length === 1;
}

/** The channels of a row that can carry a message, in the order email, telegram, sms. */
export function verifiedChannels(row: Pick<IdentityRow, FieldColumn>): Channel[] {
  const channels: Channel[] = [];
  if (row.email_enc && row.email_verified_at) channels.push('email');
  if (row.telegram_chat_enc && row.telegram_linked_at) channels.push('telegram');
  if (row.phone_enc && row.phone_verified_at) channels.push('sms');
  return channels;
}

/**
 * Verified channels per registered wallet, for the send path (call it inside its transaction).
 * Wallets absent from the map are not registered; a registered wallet may map to [].
 */
export async function reachableChannels(db: Queryable, wallets: string[]): Promise<Map<string, Channel[]>> {
  const reachable = new Map<string, Channel[]>();
  if (wallets.length === 0) return reachable;
  const rows = await db.query<{ wallet: string; email: boolean; telegram: boolean; sms: boolean }>(
    `SELECT wallet,
            (email_enc IS NOT NULL AND email_verified_at IS NOT NULL) AS email,
            (telegram_chat_enc IS NOT NULL AND telegram_linked_at IS NOT NULL) AS telegram,
            (phone_enc IS NOT NULL AND phone_verified_at IS NOT NULL) AS sms
     FROM identities WHERE wallet = ANY($1::text[])`,
    [[...new Set(wallets)]],
  );
  for (const row of rows) {
    reachable.set(
      row.wallet,
      (['email', 'telegram', 'sms'] as const).filter((channel) => row[channel]),
    );
  }
  return reachable;
}

export interface Contacts {
  email?: string;
  phone?: string;
  telegramChatId?: string;
}

/** The decrypted contacts of a wallet's verified channels only (for the delivery worker). */
export async function loadContacts(db: Queryable, secrets: SecretBox, wallet: string): Promise<Contacts> {
  const row = await findIdentity(db, wallet);
  if (!row) return {};
  const contacts: Contacts = {};
  if (row.email_enc && row.email_verified_at) contacts.email = secrets.decrypt(row.email_enc);
  if (row.phone_enc && row.phone_verified_at) contacts.phone = secrets.decrypt(row.phone_enc);
  if (row.telegram_chat_enc && row.telegram_linked_at) contacts.telegramChatId = secrets.decrypt(row.telegram_chat_enc);
  return contacts;
}
