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
 * Every item of a newest-first, page-numbered list, fetching a page at a time as the caller reads
 * (`limit` items a request, from 1 to 100), each item once by its `key`.
 *
 * Items that arrive at the head of such a list while it is read push the older ones towards later
 * pages, so a page can start with items the previous one ended with: those are recognised by
 * their key and skipped. The arrivals themselves are not read (page 1 is not read again). An item
 * leaving the list meanwhile (a notification whose status no longer matches the filter) moves the
 * later ones up, and one of them can then be missed: re-reading is the only way to be sure of a
 * list whose filter its items leave.
 */
export async function* eachItem<T>(
  fetchPage: (page: number, limit: number) => Promise<Page<T>>,
  key: (item: T) => string,
  limit = PAGE_LIMIT,
): AsyncGenerator<T, void, undefined> {
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT) throw new RangeError(`limit must be a whole number from 1 to ${PAGE_LIMIT}, got ${limit}`);
  // Only the last few pages can come back (as far as arrivals pushed them): their ids are enough.
  const recent: string[] = [];
  const seen = new Set<string>();
  for (let page = 1; ; page++) {
    const { items, total } = await fetchPage(page, limit);
    for (const item of items) {
      const id = key(item);
      if (seen.has(id)) continue;
      seen.add(id);
      recent.push(id);
      if (recent.length > REMEMBERED_PAGES * limit) seen.delete(recent.shift()!);
      yield item;
    }
    if (items.length < limit || page * limit >= total) return;
  }
}
