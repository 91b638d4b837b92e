import type { Queryable } from '../db/connection.js';
import type { Deps } from '../deps.js';
import { saveIdentity, findIdentity } from './identity-store.js';
import { consumeLinkToken, walletOfUsedLinkToken } from './link-token-store.js';
import { hashLinkToken } from './one-time-secrets.js';
import { SYSTEM_PROTOCOL } from './send-verification-code.js';

/** The part of a Telegram Bot API Update this gateway reads. */
export interface TelegramUpdate {
  update_id: number;
  message?: { chat: { id: number }; text?: string };
}

// "/start <token>", also in the "/start@BotName <token>" form groups produce.
const START = /^\/start(?:@\w+)?(?:\s+(\S+))?\s*$/;

export function shortWallet(wallet: string): string {
  return `${wallet.slice(0, 4)}…${wallet.slice(-4)}`;
}

type LinkDeps = Pick<Deps, 'db' | 'secrets' | 'channels' | 'now' | 'log'>;

/**
 * Handles one update: `/start <token>` links the chat to the token's wallet and answers in the
 * chat. Anything else is ignored. A failed reply is logged, never retried: the link is committed.
 */
export async function handleTelegramUpdate(deps: LinkDeps, update: TelegramUpdate): Promise<void> {
  const text = update.message?.text?.trim();
  const match = text ? START.exec(text) : null;
  if (!update.message || !match) return;
  const chatId = String(update.message.chat.id);
  const token = match[1];
  const wallet = token ? await linkChat(deps, token, chatId) : undefined;
  const reply = !token
    ? 'Open the Telegram link you received when registering your wallet with Herald to link this chat.'
    : wallet
      ? `Linked to wallet ${shortWallet(wallet)}. Notifications for it will arrive in this chat.`
      : 'This link has expired. Register your wallet again to get a new one.';
  const outcome = await deps.channels
    .providerFor('telegram', 'production')
    .send({ channel: 'telegram', to: chatId, text: reply, meta: { protocolId: SYSTEM_PROTOCOL, wallet: wallet ?? '', environment: 'production' } })
    .catch((error: Error) => ({ kind: 'failed' as const, error: error.message }));
  if (outcome.kind !== 'delivered') deps.log.warn({ outcome: outcome.kind, error: outcome.error }, 'telegram link reply not sent');
}

/**
 * The wallet a used token linked to this very chat, which it still reaches: Telegram sends an
 * update again when its first delivery saw no 2xx in time, and the chat then gets the same answer,
 * not "expired". Undefined for any other chat, or once the wallet has moved to another.
 */
async function linkedBefore(deps: LinkDeps, db: Queryable, tokenHash: string, chatId: string): Promise<string | undefined> {
  const wallet = await walletOfUsedLinkToken(db, tokenHash);
  const identity = wallet ? await findIdentity(db, wallet) : undefined;
  return identity?.telegram_chat_enc && identity.telegram_linked_at && deps.secrets.decrypt(identity.telegram_chat_enc) === chatId ? wallet : undefined;
}

/** Uses the token once and stores the chat id; the wallet linked, or undefined when the link is dead. */
async function linkChat(deps: LinkDeps, token: string, chatId: string): Promise<string | undefined> {
  const now = deps.now();
  return deps.db.transaction(async (tx) => {
    const tokenHash = hashLinkToken(token);
    const wallet = await consumeLinkToken(tx, tokenHash, now);
    if (!wallet) return linkedBefore(deps, tx, tokenHash, chatId);
    // The identity may have been erased after the link was issued (erasure deletes its tokens too).
    if (!(await findIdentity(tx, wallet, true))) return undefined;
    await saveIdentity(tx, wallet, { telegram_chat_enc: deps.secrets.encrypt(chatId), telegram_linked_at: now }, now);
    return wallet;
  });
}
