import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { blockedAddressReason } from './address-policy.js';

/** Where a webhook request goes: the URL, and the one address the connection is pinned to. */
export interface WebhookTarget {
  url: URL;
  /** URL host without IPv6 brackets; sent as Host and as the TLS server name. */
  hostname: string;
  address: string;
  family: 4 | 6;
}

/** A target that must not be contacted, and why. */
export class TargetRefusedError extends Error {}

export type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

const LOOKUP_TIMEOUT_MS = 5000;

/** The system resolver (what a plain connection would use), with a time limit. */
export const systemLookup: Lookup = (hostname) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`DNS lookup timed out after ${LOOKUP_TIMEOUT_MS} ms`)), LOOKUP_TIMEOUT_MS);
  });
  return Promise.race([dnsLookup(hostname, { all: true, verbatim: true }), timeout]).finally(() => clearTimeout(timer));
};

/**
 * Why `raw` cannot be a webhook URL, or null when it is an absolute http(s) URL without
 * credentials. Credentials are refused because the URL is shown in every endpoint listing.
 */
export function webhookUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `url must use http or https, not ${url.protocol.slice(0, -1)}`;
  if (!url.hostname) return 'url must have a host';
  if (url.username || url.password) return 'url must not contain a user name or password';
  return null;
}

const PUBLIC_ONLY = 'webhooks may only reach public addresses';

/**
 * Resolves the URL's host and picks the address to connect to. Unless private targets are
 * allowed, every address the host resolves to must be public: one private answer among public
 * ones is refused too, since a later lookup could pick it.
 */
export async function resolveWebhookTarget(raw: string, options: { allowPrivate: boolean; lookup?: Lookup }): Promise<WebhookTarget> {
  const problem = webhookUrlProblem(raw);
  if (problem) throw new TargetRefusedError(problem);
  const url = new URL(raw);
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (isIP(hostname)) {
    const reason = options.allowPrivate ? undefined : blockedAddressReason(hostname);
    if (reason) throw new TargetRefusedError(`${hostname} is ${reason}; ${PUBLIC_ONLY}`);
    addresses = [{ address: hostname, family: isIP(hostname) }];
  } else {
    // A name is refused in the same words whether it has no answer or a non-public one: the
    // gateway's resolver must not tell a tenant which internal names exist, nor what they point to.
    const notPublic = () => new TargetRefusedError(`${hostname} does not resolve to a public address; ${PUBLIC_ONLY}`);
    try {
      addresses = await (options.lookup ?? systemLookup)(hostname);
    } catch (error) {
      const code = (error as { code?: string }).code;
      // A resolver failing for now (EAI_AGAIN, a timeout) says so: that tells nothing about the name.
      if (!options.allowPrivate && (code === 'ENOTFOUND' || code === 'ENODATA')) throw notPublic();
      throw new TargetRefusedError(`${hostname} could not be resolved${code ? ` (${code})` : `: ${(error as Error).message}`}`);
    }
    if (addresses.length === 0) throw options.allowPrivate ? new TargetRefusedError(`${hostname} could not be resolved`) : notPublic();
    if (!options.allowPrivate && addresses.some(({ address }) => blockedAddressReason(address))) throw notPublic();
  }
  const [first] = addresses;
  return { url, hostname, address: first.address, family: first.family === 6 ? 6 : 4 };
}
