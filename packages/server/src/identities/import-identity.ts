import type { Deps } from '../deps.js';
import { deleteCodes, type CodeChannel } from './code-store.js';
import { saveIdentity, verifiedChannels, type IdentityFields } from './identity-store.js';

export interface ImportedIdentity {
  wallet: string;
  email?: string | null;
  phone?: string | null;
  telegramChatId?: string | null;
}

/**
 * The operator's import of contacts verified elsewhere: given contacts are stored as verified,
 * null removes one, omitted ones are left as they are. Pending codes and replacements of touched
 * channels die.
 */
export async function importIdentity(deps: Pick<Deps, 'db' | 'secrets' | 'now'>, input: ImportedIdentity) {
  const now = deps.now();
  const seal = (value: string | null | undefined) => (value === undefined ? undefined : value === null ? null : deps.secrets.encrypt(value));
  const at = (value: string | null | undefined) => (value === undefined ? undefined : value === null ? null : now);
  const fields: IdentityFields = {
    email_enc: seal(input.email),
    email_verified_at: at(input.email),
    email_pending_enc: input.email === undefined ? undefined : null,
    phone_enc: seal(input.phone),
    phone_verified_at: at(input.phone),
    phone_pending_enc: input.phone === undefined ? undefined : null,
    telegram_chat_enc: seal(input.telegramChatId),
    telegram_linked_at: at(input.telegramChatId),
  };
  const touched: CodeChannel[] = [...(input.email !== undefined ? ['email' as const] : []), ...(input.phone !== undefined ? ['sms' as const] : [])];
  const row = await deps.db.transaction(async (tx) => {
    await deleteCodes(tx, input.wallet, touched);
    return saveIdentity(tx, input.wallet, fields, now);
  });
  return { wallet: row.wallet, channels: verifiedChannels(row) };
}
