/** How specifically a media range names application/json: 3 exactly, 2 application/*, 1 any; 0 not at all. */
function specificity(range: string): number {
  const type = range.toLowerCase();
  if (type === 'application/json') return 3;
  if (type === 'application/*') return 2;
  return type === '*/*' ? 1 : 0;
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
  for (const part of accept.split(',')) {
    const [range, ...params] = part.split(';').map((piece) => piece.trim());
    const rank = specificity(range);
    if (rank <= best.specificity) continue;
    const qParam = params.find((param) => /^q\s*=/i.test(param));
    const q = qParam === undefined ? 1 : Number(qParam.slice(qParam.indexOf('=') + 1).trim());
    best = { specificity: rank, q: Number.isFinite(q) ? q : 1 };
  }
  return best.specificity > 0 && best.q > 0;
}
