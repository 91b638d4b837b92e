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

export interface RecipientReader {
  /** The row's recipient, from a read begun at most FRESH_MS before; rejects when that read fails. */
  read(row: Row): Promise<Recipient>;
  /** The row's recipient as the last read that succeeded found it: what a row whose own read failed still knows. */
  lastKnown(row: Row): Recipient;
  /** A row that will not be sent (given back, or its lease lapsed): later reads leave it out. */
  skip(row: Row): void;
}

/** How long before a row's send the read it is checked against may have begun. */
const FRESH_MS = 500;

async function readRecipients(db: Queryable, secrets: SecretBox, rows: Row[]): Promise<(row: Row) => Recipient> {
  // One after another: `db` may be the claim's transaction, one connection that runs one query at a time.
  const contacts = await loadContactsFor(db, secrets, [...new Set(rows.map((row) => row.wallet))]);
  const subscriptionOf = await loadSubscriptionsFor(db, rows);
  return (row) => ({ contacts: contacts.get(row.wallet), subscription: subscriptionOf(row.protocol_id, row.wallet) });
}

/**
 * The recipients of a batch's rows, each checked against a read begun at most FRESH_MS before its
 * send: read for the whole batch first (a failure there is the batch's, before anything is sent),
 * then again, for the rows not yet started, once older. A batch of 200 waits on its channels'
 * concurrency for seconds, and an opt-out, a narrowed subscription or an erased identity committed
 * meanwhile must stop the rows it has not sent yet. Rows that find a read under way wait for it
 * rather than start another; a read that fails is not kept, so the next row reads again.
 */
export async function recipientReader(db: Queryable, secrets: SecretBox, rows: Row[], clock: () => number = () => performance.now()): Promise<RecipientReader> {
  const unstarted = new Map(rows.map((row) => [row.id, row]));
  const begun = clock();
  let known = { at: begun, lookup: await readRecipients(db, secrets, rows) };
  let reading: Promise<void> | undefined;
  const readAgain = async () => {
    const at = clock();
    try {
      known = { at, lookup: await readRecipients(db, secrets, [...unstarted.values()]) };
    } finally {
      reading = undefined;
    }
  };
  return {
    async read(row) {
      if (clock() - known.at > FRESH_MS) reading ??= readAgain();
      // Still unstarted while the read it waits for is begun, so that read covers it.
      unstarted.delete(row.id);
      if (reading) await reading;
      return known.lookup(row);
    },
    lastKnown: (row) => known.lookup(row),
    skip: (row) => void unstarted.delete(row.id),
  };
}
