import type { Database, Queryable } from './connection.js';

export interface Statement {
  text: string;
  params: unknown[];
}

/**
 * Runs `read` in one snapshot (a repeatable read, read-only transaction), so that reads that
 * must agree (a count and its page) see the same rows. Inside a transaction already, its own
 * snapshot serves.
 */
export async function inSnapshot<T>(db: Queryable, read: (q: Queryable) => Promise<T>): Promise<T> {
  const database = db as Partial<Database>;
  if (typeof database.transaction !== 'function') return read(db);
  return database.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    return read(tx);
  });
}

/**
 * A page of a list and how many rows the whole list holds, read from one snapshot: a row
 * committed between the two reads would otherwise show on the page without being counted, or be
 * counted without showing. Clients that read every page (the SDK's listAll) place each row by the
 * growth of the count, so the two must agree.
 */
export async function countAndPage<Row>(db: Queryable, count: Statement, page: Statement): Promise<{ rows: Row[]; total: number }> {
  return inSnapshot(db, async (q) => {
    const [{ total }] = await q.query<{ total: number }>(count.text, count.params);
    const rows = await q.query<Row>(page.text, page.params);
    return { rows, total };
  });
}
