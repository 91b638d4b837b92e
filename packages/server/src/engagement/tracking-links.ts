import { timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.js';
import { MAX_PARAM_LENGTH } from '../http/error-handler.js';
import { isHttpUrl } from '../rendering/markdown.js';

export type LinkKind = 'open' | 'click' | 'unsubscribe';

export interface LinkClaim {
  notificationId: string;
  url?: string;
}

/**
 * Where a click link sends the reader: its http(s) address as a URL parser writes it (host in
 * punycode, path and query percent-encoded, tabs and line breaks dropped), as a browser would
 * read the link. Undefined for anything that is not an http(s) URL. A template's link is written
 * as its author typed it, so it may hold characters a Location header cannot carry.
 */
export function redirectTarget(url: string | undefined): string | undefined {
  if (!url || !isHttpUrl(url)) return undefined;
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
}

const PATHS: Record<LinkKind, string> = { open: '/track/open/', click: '/track/click/', unsubscribe: '/unsubscribe/' };

/**
 * Signed engagement links. A token is `<payload>.<hmac>` where the payload names the kind, the
 * notification and, for clicks, the destination; the HMAC (keyed by the gateway's encryption key)
 * means a click link can only redirect to a URL the gateway itself put in that message.
 */
export class TrackingLinks {
  constructor(
    private readonly secrets: SecretBox,
    private readonly publicUrl: string,
  ) {}

  private sign(kind: LinkKind, claim: LinkClaim): string {
    const payload = Buffer.from(JSON.stringify([claim.notificationId, claim.url ?? null])).toString('base64url');
    return `${payload}.${this.mac(kind, payload)}`;
  }

  private mac(kind: LinkKind, payload: string): string {
    return Buffer.from(this.secrets.digest(`engagement:${kind}:${payload}`), 'hex').subarray(0, 16).toString('base64url');
  }

  link(kind: LinkKind, claim: LinkClaim): string {
    return `${this.publicUrl}${PATHS[kind]}${this.sign(kind, claim)}`;
  }

  /**
   * The click-tracking link to `url`, or undefined when its token would be longer than a route
   * takes as a path parameter (the token carries the whole address): such a link is left as it
   * is written.
   */
  clickLink(notificationId: string, url: string): string | undefined {
    const token = this.sign('click', { notificationId, url });
    return token.length > MAX_PARAM_LENGTH ? undefined : `${this.publicUrl}${PATHS.click}${token}`;
  }

  /** The claim of a genuine token of this kind, or null for anything forged, altered or malformed. */
  verify(kind: LinkKind, token: string): LinkClaim | null {
    const [payload, mac, extra] = token.split('.');
    if (!payload || !mac || extra !== undefined || token.length > MAX_PARAM_LENGTH) return null;
    const expected = Buffer.from(this.mac(kind, payload));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    try {
      const [notificationId, url] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      if (typeof notificationId !== 'string') return null;
      return typeof url === 'string' ? { notificationId, url } : { notificationId };
    } catch {
      return null;
    }
  }
}
