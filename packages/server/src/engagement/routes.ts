import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { mediaRanges } from '../http/accept-header.js';
import { MAX_PARAM_LENGTH } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import { escapeHtml } from '../rendering/markdown.js';
import { unsubscribe } from '../subscriptions/subscription-store.js';
import { recordEngagement } from './engagement-store.js';
import { redirectTarget, TrackingLinks } from './tracking-links.js';

/** The open-tracking image: a transparent 1×1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** The pixel, as every open link answers it, valid or not: a mail client shows an image, not an error. */
export const sendPixel = (reply: FastifyReply) => reply.header('cache-control', 'no-store').type('image/gif').send(PIXEL);
const TokenParams = Type.Object({ token: Type.String({ maxLength: MAX_PARAM_LENGTH }) });
const tags = ['engagement'];
const linkAccess = { access: 'link' as const };
const HTML = 'text/html; charset=utf-8';

/** Whether the Accept header names text/html itself with a q-value above 0 (a browser's does). */
function asksForHtml(accept: string | undefined): boolean {
  return mediaRanges(accept).some(({ range, q }) => range === 'text/html' && q > 0);
}

/**
 * The answer to a forged, altered or malformed link: a page for a person who opened it in a
 * browser, the error body every error has for any other client.
 */
function invalidLink(request: FastifyRequest, reply: FastifyReply, what: string): FastifyReply {
  if (!asksForHtml(request.headers.accept)) throw new ApiError('NOT_FOUND', 'Unknown or invalid link');
  return reply.code(404).type(HTML).send(page('Link not valid', `<p>This ${what} link is not valid.</p>`));
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem">
<h1 style="font-size:1.4rem">${escapeHtml(title)}</h1>${body}</body></html>`;
}

/**
 * Email engagement: open pixel, click redirects and one-click unsubscribe (RFC 8058), all through
 * signed links. A GET on the unsubscribe link only shows a confirmation page, because mail scanners
 * follow links; the unsubscribe itself is the POST.
 */
export function engagementRoutes(app: FastifyInstance, deps: Deps): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const links = new TrackingLinks(deps.secrets, deps.config.publicUrl);

  api.get(
    '/track/open/:token',
    { config: linkAccess, schema: { tags, summary: 'Open-tracking pixel', params: TokenParams, hide: true } },
    async (request, reply) => {
      const claim = links.verify('open', request.params.token);
      // A HEAD (a link checker, a scanner) neither loads the image nor counts as an open.
      if (claim && request.method === 'GET' && !request.overLinkLimit) await recordEngagement(deps.db, claim.notificationId, 'open', null, deps.now());
      return sendPixel(reply);
    },
  );

  api.get(
    '/track/click/:token',
    { config: linkAccess, schema: { tags, summary: 'Click redirect to a link of the message', params: TokenParams, hide: true } },
    async (request, reply) => {
      const claim = links.verify('click', request.params.token);
      const target = redirectTarget(claim?.url);
      if (!claim || !target) return invalidLink(request, reply, 'tracking');
      // A HEAD does not follow the redirect: it is no click.
      if (request.method === 'GET' && !request.overLinkLimit) await recordEngagement(deps.db, claim.notificationId, 'click', target, deps.now());
      return reply.header('cache-control', 'no-store').redirect(target, 302);
    },
  );

  api.get(
    '/unsubscribe/:token',
    { config: linkAccess, schema: { tags, summary: 'Unsubscribe confirmation page', params: TokenParams, hide: true } },
    async (request, reply) => {
      const claim = links.verify('unsubscribe', request.params.token);
      if (!claim) return invalidLink(request, reply, 'unsubscribe');
      const action = `${deps.config.publicUrl}/unsubscribe/${encodeURIComponent(request.params.token)}`;
      return reply
        .type(HTML)
        .send(
          page(
            'Unsubscribe',
            `<p>Stop receiving these notifications?</p><form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
          ),
        );
    },
  );

  // RFC 8058 POSTs are form-encoded ("List-Unsubscribe=One-Click"); the body is not needed.
  app.register(async (scope) => {
    scope.addContentTypeParser(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'], { parseAs: 'string' }, (_r, _b, done) =>
      done(null, undefined),
    );
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/unsubscribe/:token',
      { config: linkAccess, schema: { tags, summary: 'RFC 8058 one-click unsubscribe', params: TokenParams, hide: true } },
      async (request, reply) => {
        const claim = links.verify('unsubscribe', request.params.token);
        if (!claim) return invalidLink(request, reply, 'unsubscribe');
        const now = deps.now();
        const engaged = await deps.db.transaction(async (tx) => {
          const row = await recordEngagement(tx, claim.notificationId, 'unsubscribe', null, now);
          if (row) await unsubscribe(tx, row.protocol_id, row.wallet, now);
          return row;
        });
        if (!engaged) return invalidLink(request, reply, 'unsubscribe');
        return reply.type(HTML).send(page('Unsubscribed', '<p>You will not receive these notifications any more.</p>'));
      },
    );
  });
}
