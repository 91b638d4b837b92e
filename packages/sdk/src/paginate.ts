/** A page of a page-numbered list: its items, and how many the whole list holds. */
export interface Page<T> {
  items: T[];
  total: number;
}

/** Items a `listAll` request asks for at a time: the API's largest page. */
export const PAGE_LIMIT = 100;

/**
 * Every item of a newest-first, page-numbered list, fetching a page at a time as the caller reads.
 *
 * New items arrive at the head of such a list while it is read and push the older ones towards
 * later pages. The list's `total` tells how many arrived since the first page: that many positions
 * are skipped, so no item is yielded twice and none is missed on that account (the items that
 * arrived are not yielded: the first page fixed the list being read). An item leaving the list
 * meanwhile (a notification whose status no longer matches the filter) can move an unread item to a
 * page already read; re-reading is the only way to be sure of those.
 */
export async function* eachItem<T>(fetchPage: (page: number, limit: number) => Promise<Page<T>>, limit = PAGE_LIMIT): AsyncGenerator<T, void, undefined> {
  let firstTotal: number | undefined;
  /** Items of the list as it was at the first page that have been yielded, from the head. */
  let read = 0;
  let shift = 0;
  for (;;) {
    const page = Math.floor((read + shift) / limit) + 1;
    const { items, total } = await fetchPage(page, limit);
    firstTotal ??= total;
    shift = Math.max(0, total - firstTotal);
    const start = (page - 1) * limit - shift;
    for (let i = Math.max(0, read - start); i < items.length && start + i < firstTotal; i++) {
      read = start + i + 1;
      yield items[i];
    }
    if (items.length < limit || read >= firstTotal || (page - 1) * limit + items.length >= total) return;
  }
}
