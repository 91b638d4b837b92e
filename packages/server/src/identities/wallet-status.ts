import type { Queryable } from '../db/connection.js';
import { reachableChannels } from './identity-store.js';

/** What a protocol may know of a wallet: whether it is registered and which channels reach it. */
export async function walletStatus(db: Queryable, wallet: string) {
  const channels = (await reachableChannels(db, [wallet])).get(wallet);
  return { registered: channels !== undefined, channels: channels ?? [] };
}
