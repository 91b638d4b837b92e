/**
 * One notification rendered for every channel; POST /v1/preview and the delivery worker share it.
 *
 * Service footer variants (email only; `serviceFooter` on templates, `footer` here):
 * - `full` (default): why the reader got this (category and protocol name), the unsubscribe link
 *   when an unsubscribeUrl is given, and "Sent via Herald".
 * - `minimal`: the unsubscribe link only (when an unsubscribeUrl is given).
 * - `none`: nothing, except that non-transactional categories (defi, governance, marketing) still
 *   show the unsubscribe link when an unsubscribeUrl is given. Transactional categories
 *   (security, system) are the only ones that can go out without it.
 *
 * Click tracking (`rewriteLink`) rewrites the http(s) links of the body only: the footer's
 * unsubscribe link already is a gateway URL and counting it as a click would skew click rates.
 */
import { cleanSubject, stripControlChars } from './clean-text.js';
import { renderEmailLayout } from './email-layout.js';
import { parseMarkdown, renderMarkdownHtml } from './markdown.js';
import { markdownToPlainText } from './plain-text.js';
import { countSmsSegments, renderSmsText, truncateSmsText, type SmsEncoding } from './sms.js';
import { renderTelegramText } from './telegram.js';

export type Category = 'defi' | 'governance' | 'system' | 'marketing' | 'security';
export type ServiceFooter = 'full' | 'minimal' | 'none';

export interface RenderInput {
  subject: string;
  /** Markdown. */
  body: string;
  category: Category;
  protocolName: string;
  /** Defaults to 'full'. */
  footer?: ServiceFooter;
  /** Shown in the footer; always shown for non-transactional categories. Must be http(s). */
  unsubscribeUrl?: string;
  /** 1x1 tracking image appended to the email HTML when given. Must be http(s). */
  openPixelUrl?: string;
  /** Click tracking: every http(s) link href of the email body goes through it. */
  rewriteLink?: (url: string) => string;
}

export interface RenderedNotification {
  /** Single line, trimmed, control characters removed. */
  subject: string;
  /** Full responsive email document. */
  html: string;
  /** Plain-text email part. */
  text: string;
  /** Telegram Bot API text for parse_mode=HTML, at most 4096 visible characters. */
  telegramText: string;
  sms: { text: string; encoding: SmsEncoding; segments: number; characters: number };
}

export function renderNotification(input: RenderInput): RenderedNotification {
  const subject = cleanSubject(input.subject);
  const body = parseMarkdown(stripControlChars(input.body));
  return lazyRendering(subject, {
    email: () =>
      renderEmailLayout({
        subject,
        contentHtml: renderMarkdownHtml(body, { rewriteLink: input.rewriteLink }),
        textContent: markdownToPlainText(body),
        footer: input.footer,
        protocolName: input.protocolName,
        unsubscribeUrl: input.unsubscribeUrl,
        openPixelUrl: input.openPixelUrl,
        category: input.category,
      }),
    telegramText: () => renderTelegramText(subject, body),
    smsText: () => renderSmsText(subject, body),
  });
}

/**
 * A rendering whose channel formats are made on first read: the delivery worker needs one
 * channel's (an email costs several times a Telegram or SMS text), the preview reads them all.
 */
export function lazyRendering(
  subject: string,
  make: { email: () => { html: string; text: string }; telegramText: () => string; smsText: () => string },
): RenderedNotification {
  const email = once(make.email);
  const telegramText = once(make.telegramText);
  const sms = once(() => {
    const text = truncateSmsText(make.smsText());
    return { text, ...countSmsSegments(text) };
  });
  return {
    subject,
    get html() {
      return email().html;
    },
    get text() {
      return email().text;
    },
    get telegramText() {
      return telegramText();
    },
    get sms() {
      return sms();
    },
  };
}

function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
