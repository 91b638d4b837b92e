import { hasVisibleText } from './clean-text.js';
import { escapeHtml, isHttpUrl, parseMarkdown, type Markdown } from './markdown.js';
import { describeLink } from './plain-text.js';
import { renderMarkdownText, type TextDialect } from './render-markdown-text.js';

/** Bot API sendMessage limit, counted on the text after entity parsing. */
export const TELEGRAM_MAX_CHARS = 4096;

/** Telegram's HTML parse mode needs only &, < and > escaped in text. */
export function escapeTelegramText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Telegram rejects the whole message on any tag outside its subset, so this dialect only ever
 * emits b, i, s, code, pre, a href and blockquote. Telegram also refuses nested blockquotes, and
 * code or a link inside a link, so those are flattened.
 */
const telegramDialect: TextDialect = {
  text: escapeTelegramText,
  strong: (inner) => `<b>${inner}</b>`,
  em: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  code: (text) => `<code>${escapeTelegramText(text)}</code>`,
  link: (inner, href, auto) => {
    if (!isHttpUrl(href)) return escapeTelegramText(describeLink(unescapeTelegram(inner), href, auto));
    // A linked image is a link itself: its tag goes, its text stays.
    const label = inner.replace(/<\/?code>|<a href="[^"]*">|<\/a>/g, '');
    // Escaping turns visible characters into visible ones: the label's text can be judged as it is.
    return `<a href="${escapeHtml(href)}">${hasVisibleText(label.replace(/<[^>]*>/g, '')) ? label : escapeTelegramText(href)}</a>`;
  },
  image: (alt, src) =>
    /^https:\/\//i.test(src) ? `<a href="${escapeHtml(src)}">${escapeTelegramText(alt || src)}</a>` : escapeTelegramText(alt),
  heading: (inner) => `<b>${inner}</b>`,
  blockquote: (inner, depth) => (depth === 0 ? `<blockquote>${inner}</blockquote>` : inner),
  codeBlock: (text) => `<pre>${escapeTelegramText(text)}</pre>`,
  bullet: '• ',
  rule: '———',
};

/** mailto links become text, so their already-rendered label goes back to raw text first. */
function unescapeTelegram(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The subject in bold, a blank line, then the body, within Telegram's length limit. */
export function renderTelegramText(subject: string, body: Markdown): string {
  const content = renderMarkdownText(parseMarkdown(body), telegramDialect);
  const heading = subject ? `<b>${escapeTelegramText(subject)}</b>` : '';
  return truncateTelegramHtml([heading, content].filter(Boolean).join('\n\n'));
}

// Our own output has only subset tags, the three text entities and &quot; inside href values.
const PIECE = /<(\/?)([a-z]+)(?: href="[^"]*")?>|&(?:amp|lt|gt|quot);|[^<&]+/g;
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function visibleLength(html: string): number {
  let length = 0;
  for (const [piece, , tag] of html.matchAll(PIECE)) {
    if (!tag) length += piece.startsWith('&') ? 1 : piece.length;
  }
  return length;
}

/**
 * Shortens rendered Telegram HTML to `limit` visible UTF-16 units (tags do not count, an entity
 * counts once), ending with "…". Cuts only between pieces or grapheme clusters, so no tag, entity,
 * surrogate pair or emoji sequence is split, and closes every tag still open.
 */
export function truncateTelegramHtml(html: string, limit = TELEGRAM_MAX_CHARS): string {
  if (visibleLength(html) <= limit) return html;
  const budget = limit - 1;
  const open: string[] = [];
  let used = 0;
  let out = '';
  for (const [piece, closing, tag] of html.matchAll(PIECE)) {
    if (tag) {
      if (closing) open.pop();
      else open.push(tag);
      out += piece;
      continue;
    }
    const length = piece.startsWith('&') ? 1 : piece.length;
    if (used + length <= budget) {
      out += piece;
      used += length;
      continue;
    }
    if (!piece.startsWith('&')) out += cutToGraphemes(piece, budget - used);
    break;
  }
  const closers = open.reverse().map((tag) => `</${tag}>`).join('');
  return `${out.replace(/\s+$/, '')}…${closers}`;
}

/**
 * The longest run of whole grapheme clusters from the start of `text` within `max` UTF-16 units.
 * Only the first max + 1 units are segmented: a cluster cut short there ends past `max` anyway,
 * and segmenting the whole of a long piece (a 256 KB paragraph) took the event loop a second.
 */
function cutToGraphemes(text: string, max: number): string {
  let out = '';
  for (const { segment } of graphemes.segment(text.slice(0, max + 1))) {
    if (out.length + segment.length > max) break;
    out += segment;
  }
  return out;
}
