import { mediaRanges } from '../http/accept-header.js';

/** How specifically a media range names application/json: 3 exactly, 2 application/*, 1 any; 0 not at all. */
function specificity(range: string): number {
  if (range === 'application/json') return 3;
  if (range === 'application/*') return 2;
  return range === '*/*' ? 1 : 0;
}

/**
 * Whether a client can read the JSON this endpoint answers; no Accept header means anything goes.
 * The most specific range naming JSON decides (RFC 9110 §12.5.1), so `application/json;q=0, *\/*`
 * refuses JSON. The contract asks MCP clients for Content-Type alone, so a client that accepts JSON
 * is served even when it does not list the SSE type the SDK's transport asks for (the route
 * completes the header).
 */
export function acceptsJson(accept: string | undefined): boolean {
  if (!accept || !accept.trim()) return true;
  let best = { specificity: 0, q: 0 };
  for (const { range, q } of mediaRanges(accept)) {
    const rank = specificity(range);
    if (rank > best.specificity) best = { specificity: rank, q: Number.isFinite(q) ? q : 1 };
  }
  return best.specificity > 0 && best.q > 0;
}
