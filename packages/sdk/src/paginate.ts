/** A page of a page-numbered list: its items, and how many the whole list holds. */
export interface Page<T> {
  items: T[];
  total: number;
}

/** Items a `listAll` request asks for at a time: the API's largest page. */
export const PAGE_LIMIT = 100;

/** Pages' worth of ids remembered to recognise an item met again. */
const REMEMBERED_PAGES = 4;

/**
 * Reads in a row, each after the list grew by a page or more and bringing nothing new, after which
 * the list is taken to grow faster than it can be read by pages; and reads in a row bringing
 * nothing new at all, whatever the growth, after which the loop gives up all the same.
 */
const STALLED_GROWING = 3;
const STALLED_AT_ALL = 50;

/**
 * Every item of a newest-first, page-numbered list, fetching a page at a time as the caller reads
 * (`limit` items a request, from 1 to 100), each item once.
 *
 * Items that arrive at the head of such a list while it is read push the older ones towards later
 * pages. The growth of `total` since the first page says by how much, and so which page the next
 * unread item has moved to: the read after a growth starts a page earlier than that, and the items
 * met again are recognised by their `key` (the last few pages' are remembered), or, when more
 * than a page behind, by their place. The gateway reads a page and its `total` from one snapshot;
 * were an item counted apart from its page, its place would be off by as much (the id memory
 * covers four pages of that). An item leaving the list meanwhile
 * (a notification whose status no longer matches the filter) moves the later ones up, and one of
 * them can then be missed: re-reading is the only way to be sure of a list whose filter its items
 * leave. A list that grows by a page or more between every two reads cannot be read to its end by
 * pages: the loop then throws rather than read forever.
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
  let lastTotal = 0;
  /** The place, in the list as first counted, after the last item yielded. */
  let read = 0;
  let growing = 0;
  let idle = 0;
  for (let page = 1; ; ) {
    const { items, total } = await fetchPage(page, limit);
    firstTotal ??= total;
    const grew = total - (lastTotal || total);
    lastTotal = total;
    const shift = Math.max(0, total - firstTotal);
    const start = (page - 1) * limit - shift;
    let fresh = 0;
    for (let i = 0; i < items.length; i++) {
      // Surely read before: a page or more behind (an arrival between a count and its page can
      // make a place seem up to a page further on than it is; those are told apart by key).
      if (start + i < read - limit) continue;
      const id = key(items[i]);
      if (seen.has(id)) continue;
      seen.add(id);
      recent.push(id);
      if (recent.length > REMEMBERED_PAGES * limit) seen.delete(recent.shift()!);
      read = Math.max(read, start + i + 1);
      fresh++;
      yield items[i];
    }
    // Only a short page is the end: what arrived after the count pushed items past `total`.
    if (items.length < limit) return;
    growing = fresh === 0 && grew >= limit ? growing + 1 : 0;
    idle = fresh === 0 ? idle + 1 : 0;
    if (growing >= STALLED_GROWING || idle >= STALLED_AT_ALL) {
      throw new Error(`the list grew faster than it could be read, by ${limit} items or more between reads: read it with a larger limit, or a narrower filter`);
    }
    page = Math.max(page + 1, Math.floor(Math.max(0, read + shift - (shift > 0 ? limit : 0)) / limit) + 1);
  }
}

/** eachItem over a list answered as `{data, total}`, as most lists are (schedules answer `{items, total}`). */
export function eachDataItem<T>(
  fetchPage: (page: number, limit: number) => Promise<{ data: T[]; total: number }>,
  key: (item: T) => string,
  limit?: number,
): AsyncGenerator<T, void, undefined> {
  return eachItem(
    async (page, pageLimit) => {
      const { data, total } = await fetchPage(page, pageLimit);
      return { items: data, total };
    },
    key,
    limit,
  );
}
