import type { SecretBox } from '../crypto/secret-box.js';
import type { Queryable } from '../db/connection.js';
import { loadContactsFor, type WalletContacts } from './load-contacts.js';
import { loadSubscriptionsFor, type SubscriptionState } from './load-subscriptions.js';

/** What a send checks of its recipient: its verified contacts (none once erased) and its subscription to the protocol. */
export interface Recipient {
  contacts: WalletContacts | undefined;
  subscription: SubscriptionState | undefined;
}

/** A notification as the reader needs it. */
interface Row {
  id: string;
  protocol_id: string;
  wallet: string;
}

export type RecipientOf = (row: Row) => Promise<Recipient>;

/** How old what a send is checked against may be. */
const FRESH_MS = 500;

async function readRecipients(db: Queryable, secrets: SecretBox, rows: Row[]): Promise<(row: Row) => Recipient> {
  // One after another: `db` may be the claim's transaction, one connection that runs one query at a time.
  const contacts = await loadContactsFor(db, secrets, [...new Set(rows.map((row) => row.wallet))]);
  const subscriptionOf = await loadSubscriptionsFor(db, rows);
  return (row) => ({ contacts: contacts.get(row.wallet), subscription: subscriptionOf(row.protocol_id, row.wallet) });
}

/**
 * The recipient of each row of a batch as it stood at most FRESH_MS before the row's send begins:
 * read for the whole batch first (a failure there is the batch's, before anything is sent), then
 * again, for the rows not yet started, once older. A batch of 200 waits on its channels'
 * concurrency for seconds, and an opt-out, a narrowed subscription or an erased identity committed
 * meanwhile must stop the rows it has not sent yet.
 */
export async function recipientReader(db: Queryable, secrets: SecretBox, rows: Row[], clock: () => number = () => performance.now()): Promise<RecipientOf> {
  const unstarted = new Map(rows.map((row) => [row.id, row]));
  let snapshot = { at: clock(), lookup: readRecipients(db, secrets, rows) };
  await snapshot.lookup;
  return async (row) => {
    if (clock() - snapshot.at > FRESH_MS) snapshot = { at: clock(), lookup: readRecipients(db, secrets, [...unstarted.values()]) };
    const { lookup } = snapshot;
    unstarted.delete(row.id);
    return (await lookup)(row);
  };
}
