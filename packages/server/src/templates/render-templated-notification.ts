import { cleanSubject, stripControlChars } from '../rendering/clean-text.js';
import { renderEmailLayout } from '../rendering/email-layout.js';
import { lazyRendering, type Category, type RenderedNotification, type ServiceFooter } from '../rendering/render-notification.js';
import { escapeTelegramText, truncateTelegramHtml } from '../rendering/telegram.js';
import { compileTemplate, type TemplateSources } from './compile-template.js';
import { rewriteHtmlLinks } from './rewrite-html-links.js';

/** One stored template version: what a notification that used it is rendered from. */
export interface TemplateVersion extends TemplateSources {
  templateId: string;
  version: number;
  serviceFooter: ServiceFooter;
}

export interface TemplatedRenderInput {
  template: TemplateVersion;
  variables: Record<string, unknown>;
  /** The notification's category (it decides whether the unsubscribe link may be left out). */
  category: Category;
  protocolName: string;
  unsubscribeUrl?: string;
  openPixelUrl?: string;
  rewriteLink?: (url: string) => string;
}

/**
 * A notification rendered from a template, in the same shape as renderNotification's: the
 * rendered htmlSource goes into the shared email layout (so the template's serviceFooter, the
 * open pixel and click tracking apply as for any email); Telegram and SMS carry the rendered
 * textSource. The template's own markup is the operator's and passes through as written; the
 * values of its variables are HTML-escaped by the template engine. Control and bidi characters
 * are dropped from all three parts, as from Markdown bodies (clean-text.ts). Throws
 * MissingVariableError or TemplateRenderError (see compile-template.ts).
 */
export function renderTemplatedNotification(input: TemplatedRenderInput): RenderedNotification {
  const { template } = input;
  const rendered = compileTemplate(template, `${template.templateId}@${template.version}`).render(input.variables);
  const subject = cleanSubject(rendered.subject);
  const text = stripControlChars(rendered.text).trim();
  return lazyRendering(subject, {
    email: () =>
      renderEmailLayout({
        subject,
        contentHtml: rewriteHtmlLinks(stripControlChars(rendered.html), input.rewriteLink),
        textContent: text,
        footer: template.serviceFooter,
        protocolName: input.protocolName,
        unsubscribeUrl: input.unsubscribeUrl,
        openPixelUrl: input.openPixelUrl,
        category: input.category,
      }),
    telegramText: () => truncateTelegramHtml([subject && `<b>${escapeTelegramText(subject)}</b>`, escapeTelegramText(text)].filter(Boolean).join('\n\n')),
    smsText: () => [subject, text.replace(/\s+/g, ' ')].filter(Boolean).join(': '),
  });
}
