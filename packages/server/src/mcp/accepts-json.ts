const ACCEPTS_JSON = /(^|,)\s*(application\/json|application\/\*|\*\/\*)\s*(;|,|$)/i;

/**
 * Whether a client can read the JSON this endpoint answers; no Accept header means anything goes.
 * The contract asks MCP clients for Content-Type alone, so a client that accepts JSON is served even
 * when it does not list the SSE type the SDK's transport asks for (the route completes the header).
 */
export function acceptsJson(accept: string | undefined): boolean {
  return !accept || ACCEPTS_JSON.test(accept);
}
