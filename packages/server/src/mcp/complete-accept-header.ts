import type { IncomingMessage } from 'node:http';

const TRANSPORT_ACCEPT = 'application/json, text/event-stream';

const ACCEPTS_JSON = /(^|,)\s*(application\/json|application\/\*|\*\/\*)\s*(;|,|$)/i;

/** Whether a client can read the JSON this endpoint answers; no Accept header means anything goes. */
export function acceptsJson(accept: string | undefined): boolean {
  return !accept || ACCEPTS_JSON.test(accept);
}

/**
 * The SDK's transport refuses (406) a POST whose Accept header does not list both JSON and SSE. This
 * endpoint only ever answers JSON, so a client that accepts JSON, or says nothing (the contract asks
 * for Content-Type alone), is served: its headers are completed before the transport reads them.
 */
export function completeAcceptHeader(raw: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): void {
  const accept = raw.headers.accept;
  if (!acceptsJson(accept)) return;
  if (accept?.includes('application/json') && accept.includes('text/event-stream')) return;
  raw.headers.accept = TRANSPORT_ACCEPT;
  // The transport's request adapter reads rawHeaders as well as headers.
  const rawHeaders = raw.rawHeaders.filter((_, i, all) => all[i - (i % 2)].toLowerCase() !== 'accept');
  rawHeaders.push('Accept', TRANSPORT_ACCEPT);
  raw.rawHeaders.splice(0, raw.rawHeaders.length, ...rawHeaders);
}
