import { cleanSubject } from './clean-text.js';
import { escapeHtml, isHttpUrl } from './markdown.js';
import type { Category, ServiceFooter } from './render-notification.js';

export interface EmailLayoutInput {
  subject: string;
  /** Body HTML that is already safe (rendered markdown or a rendered template). */
  contentHtml: string;
  /** The same body as plain text, for the text/plain part. */
  textContent: string;
  footer?: ServiceFooter;
  protocolName: string;
  unsubscribeUrl?: string;
  openPixelUrl?: string;
  category: Category;
}

export interface EmailLayout {
  html: string;
  text: string;
}

/** Security and system messages may go out without an unsubscribe link; the rest never do. */
export function isTransactional(category: Category): boolean {
  return category === 'security' || category === 'system';
}

const CATEGORY_NOUNS: Record<Category, string> = {
  defi: 'DeFi update',
  governance: 'governance update',
  system: 'system notice',
  marketing: 'marketing message',
  security: 'security alert',
};

const FONT = "font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;";
const WRAP = 'overflow-wrap:break-word;word-wrap:break-word;word-break:break-word;';
const FOOTER_LINK_STYLE = 'color:#6b7280;text-decoration:underline;';

interface FooterLines {
  reason?: string;
  unsubscribeLabel?: string;
  unsubscribeUrl?: string;
  sentVia?: string;
}

/** Which footer lines a message carries (see the variants at the top of render-notification.ts). */
function chooseFooterLines(input: EmailLayoutInput): FooterLines {
  const variant = input.footer ?? 'full';
  const showUnsubscribe =
    input.unsubscribeUrl !== undefined && (variant !== 'none' || !isTransactional(input.category));
  const lines: FooterLines = {};
  if (variant === 'full') {
    lines.reason =
      `You received this ${CATEGORY_NOUNS[input.category]} from ${input.protocolName} because your wallet ` +
      'is registered to receive notifications through Herald.';
    lines.sentVia = 'Sent via Herald';
  }
  if (showUnsubscribe) {
    lines.unsubscribeLabel = `Unsubscribe from ${input.protocolName}`;
    lines.unsubscribeUrl = input.unsubscribeUrl;
  }
  return lines;
}

function renderFooterHtml(lines: FooterLines): string {
  const paragraphs: string[] = [];
  if (lines.reason) paragraphs.push(escapeHtml(lines.reason));
  if (lines.unsubscribeUrl && lines.unsubscribeLabel) {
    paragraphs.push(
      `<a href="${escapeHtml(lines.unsubscribeUrl)}" target="_blank" rel="noopener noreferrer" ` +
        `style="${FOOTER_LINK_STYLE}">${escapeHtml(lines.unsubscribeLabel)}</a>`,
    );
  }
  if (lines.sentVia) paragraphs.push(escapeHtml(lines.sentVia));
  if (paragraphs.length === 0) return '';
  const body = paragraphs.map((p) => `<p style="margin:0 0 8px 0;">${p}</p>`).join('\n');
  return (
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:600px;">\n' +
    `<tr><td align="center" style="padding:16px 24px;${FONT}font-size:12px;line-height:1.5;color:#6b7280;">\n` +
    `${body}\n</td></tr>\n</table>\n`
  );
}

function renderFooterText(lines: FooterLines): string {
  const out: string[] = [];
  if (lines.reason) out.push(lines.reason);
  if (lines.unsubscribeUrl) out.push(`${lines.unsubscribeLabel}: ${lines.unsubscribeUrl}`);
  if (lines.sentVia) out.push(lines.sentVia);
  return out.length ? `\n\n-- \n${out.join('\n')}` : '';
}

function assertHttpUrl(name: string, url: string | undefined): void {
  if (url !== undefined && !isHttpUrl(url)) throw new TypeError(`${name} must be an http(s) URL`);
}

/** A complete responsive email (table layout, inline styles, 600px wide) plus its text part. */
export function renderEmailLayout(input: EmailLayoutInput): EmailLayout {
  assertHttpUrl('unsubscribeUrl', input.unsubscribeUrl);
  assertHttpUrl('openPixelUrl', input.openPixelUrl);
  const subject = cleanSubject(input.subject);
  const title = escapeHtml(subject);
  const lines = chooseFooterLines(input);
  const pixel = input.openPixelUrl
    ? `<img src="${escapeHtml(input.openPixelUrl)}" width="1" height="1" alt="" ` +
      'style="display:block;width:1px;height:1px;border:0;">\n'
    : '';
  const html =
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    '<meta http-equiv="X-UA-Compatible" content="IE=edge">\n' +
    `<title>${title}</title>\n</head>\n` +
    '<body style="margin:0;padding:0;background-color:#f4f5f7;">\n' +
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background-color:#f4f5f7;">\n' +
    '<tr><td align="center" style="padding:24px 12px;">\n' +
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" ' +
    'style="max-width:600px;background-color:#ffffff;border-radius:8px;">\n' +
    // A long unbroken word or URL wraps instead of widening the 600 px card on a phone; the title
    // and the content take their direction from their own text (dir="auto"), so Arabic or Hebrew
    // reads right to left.
    `<tr><td dir="auto" style="padding:32px 32px 8px 32px;${FONT}color:#111827;${WRAP}">` +
    `<h1 style="margin:0;font-size:22px;line-height:1.3;font-weight:700;">${title}</h1></td></tr>\n` +
    `<tr><td dir="auto" style="padding:16px 32px 24px 32px;${FONT}font-size:16px;line-height:1.5;color:#1f2937;${WRAP}">\n` +
    `${input.contentHtml}</td></tr>\n</table>\n` +
    renderFooterHtml(lines) +
    `</td></tr>\n</table>\n${pixel}</body>\n</html>\n`;
  const content = input.textContent.trim();
  const text = `${[subject, content].filter(Boolean).join('\n\n')}${renderFooterText(lines)}\n`;
  return { html, text };
}
