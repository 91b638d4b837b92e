import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { checkContent } from './check-content.js';
import { errorResponses } from '../http/schemas.js';
import { renderNotification } from '../rendering/render-notification.js';
import { renderTemplatedNotification } from '../templates/render-templated-notification.js';
import { findTemplates, previewVariables } from '../templates/resolve-send-templates.js';
import { WalletSchema } from '../wallet.js';
import { CategorySchema } from './schemas.js';

const PreviewBody = Type.Object({
  wallet: WalletSchema,
  subject: Type.String({ minLength: 1, maxLength: 998 }),
  body: Type.String({ minLength: 1 }),
  category: CategorySchema,
  templateId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  templateVariables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const Preview = Type.Object({
  renderedHtml: Type.String(),
  telegramText: Type.String(),
  smsText: Type.String(),
  subject: Type.String(),
  sms: Type.Object({ encoding: Type.String(), segments: Type.Integer(), characters: Type.Integer() }),
});

/** POST /v1/preview: the message as each channel would carry it, without sending anything. */
export function previewRoutes(app: FastifyInstance, deps: Deps): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/preview',
    {
      schema: {
        tags: ['notifications'],
        summary: 'Render a notification for email, Telegram and SMS without sending it',
        body: PreviewBody,
        response: { 200: Preview, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const { protocol } = request.auth!;
      const input = request.body;
      checkContent(protocol.tier, input);
      const templates = await findTemplates(deps.db, protocol, [input]);
      const common = { category: input.category, protocolName: protocol.name, unsubscribeUrl: `${deps.config.publicUrl}/unsubscribe/preview` };
      const template = input.templateId ? templates.get(input.templateId)! : undefined;
      const rendered = template
        ? renderTemplatedNotification({ ...common, template, variables: previewVariables(template, input.templateVariables) })
        : renderNotification({ ...common, subject: input.subject, body: input.body });
      return {
        renderedHtml: rendered.html,
        telegramText: rendered.telegramText,
        smsText: rendered.sms.text,
        subject: rendered.subject,
        sms: { encoding: rendered.sms.encoding, segments: rendered.sms.segments, characters: rendered.sms.characters },
      };
    },
  );
}
