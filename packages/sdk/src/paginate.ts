/** A page of a page-numbered list: its items, and how many the whole list holds. */
export interface Page<T> {
  items: T[];
  total: number;
}

/** Items a `listAll` request asks for at a time: the API's largest page. */
export const PAGE_LIMIT = 100;

/** Pages' worth of ids remembered to recognise an item met again. */
const REMEMBERED_PAGES = 4;

/** Pages in a row with nothing new after which the list is taken to grow faster than it is read. */
const STALLED_PAGES = 3;

/** Positions before the next unread one within which an item is checked by key rather than by place. */
const SLACK = 2;

/**
 * Every item of a newest-first, page-numbered list, fetching a page at a time as the caller reads
 * (`limit` items a request, from 1 to 100), each item once.
 *
 * Items that arrive at the head of such a list while it is read push the older ones towards later
 * pages. The growth of `total` since the first page says by how much: it places each item read in
 * the list as it was first counted, so an item already read is skipped by its place, and the next
 * page read is the one the next unread item has moved to. The gateway counts a list before it
 * reads the page, so an arrival in between shows on the page uncounted: the items it pushes back
 * are recognised by their `key` (the last few pages' are remembered). The arrivals themselves are
 * not read (page 1 is not read again). An item leaving the list meanwhile (a notification whose
 * status no longer matches the filter) moves the later ones up, and one of them can then be
 * missed: re-reading is the only way to be sure of a list whose filter its items leave. A burst
 * of any size is caught up with at the next read; a list that grows by a page or more between
 * every two reads cannot be read to its end this way, and the loop then throws rather than read
 * forever.
 */
export async function* eachItem<T>(
  fetchPage: (page: number, limit: number) => Promise<Page<T>>,
  key: (item: T) => string,
  limit = PAGE_LIMIT,
): AsyncGenerator<T, void, undefined> {
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT) throw new RangeError(`limit must be a whole number from 1 to ${PAGE_LIMIT}, got ${limit}`);
  const recent: string[] = [];
  const seen = new Set<string>();
  let firstTotal: number | undefined;
  /** The place, in the list as first counted, of the next unread item. */
  let read = 0;
  let stalled = 0;
  for (let page = 1; ; ) {
    const { items, total } = await fetchPage(page, limit);
    firstTotal ??= total;
    const shift = Math.max(0, total - firstTotal);
    const start = (page - 1) * limit - shift;
    let fresh = 0;
    for (let i = 0; i < items.length; i++) {
      if (start + i < read - SLACK) continue;
      const id = key(items[i]);
      if (seen.has(id)) continue;
      seen.add(id);
      recent.push(id);
      if (recent.length > REMEMBERED_PAGES * limit) seen.delete(recent.shift()!);
      read = Math.max(read, start + i + 1);
      fresh++;
      yield items[i];
    }
    // Only a short page is the end: `total` was counted before the page was read, and what arrived
    // in between pushed items past it.
    if (items.length < limit) return;
    stalled = fresh === 0 ? stalled + 1 : 0;
    if (stalled >= STALLED_PAGES) throw new Error(`the list grew by ${limit} items or more between each of ${STALLED_PAGES} page reads: read it with a larger limit, or a narrower filter`);
    page = Math.max(page + 1, Math.floor((read + shift) / limit) + 1);
  }
}
