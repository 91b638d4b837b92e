import MarkdownIt, { type Token } from 'markdown-it';
import { hasVisibleText } from './clean-text.js';

/**
 * One markdown parser for every channel. Raw HTML is off (it is escaped as text, never passed
 * through) and only http, https and mailto destinations are accepted: markdown-it leaves a link,
 * autolink or reference whose destination fails `validateLink` as its literal source text, so
 * `[x](javascript:…)` reaches the reader as harmless text in every channel.
 */
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
md.validateLink = isAllowedLinkUrl;
// Styles are attached once at parse time, so one token stream can feed every renderer; the HTML
// rules below read tokens without changing them.
md.core.ruler.push('inline_styles', (state) => {
  styleTokens(state.tokens);
});

/** Email clients drop <style> blocks, so every element the body can produce carries its style. */
const ELEMENT_STYLES: Record<string, string> = {
  p: 'margin:0 0 16px 0;',
  h1: 'margin:24px 0 12px 0;font-size:24px;line-height:1.3;',
  h2: 'margin:24px 0 12px 0;font-size:20px;line-height:1.3;',
  h3: 'margin:20px 0 10px 0;font-size:18px;line-height:1.3;',
  h4: 'margin:16px 0 8px 0;font-size:16px;line-height:1.3;',
  h5: 'margin:16px 0 8px 0;font-size:14px;line-height:1.3;',
  h6: 'margin:16px 0 8px 0;font-size:13px;line-height:1.3;',
  a: 'color:#2563eb;text-decoration:underline;',
  blockquote: 'margin:0 0 16px 0;padding:0 0 0 12px;border-left:4px solid #d0d7de;color:#57606a;',
  ul: 'margin:0 0 16px 0;padding:0 0 0 24px;',
  ol: 'margin:0 0 16px 0;padding:0 0 0 24px;',
  li: 'margin:0 0 4px 0;',
  code: 'font-family:Menlo,Consolas,monospace;font-size:14px;background-color:#f3f4f6;padding:1px 4px;border-radius:3px;',
  hr: 'border:0;border-top:1px solid #e5e7eb;margin:24px 0;',
  table: 'border-collapse:collapse;margin:0 0 16px 0;',
  th: 'border:1px solid #d0d7de;padding:6px 10px;text-align:left;',
  td: 'border:1px solid #d0d7de;padding:6px 10px;',
  img: 'max-width:100%;height:auto;border:0;',
};
const PRE_STYLE =
  'margin:0 0 16px 0;padding:12px;background-color:#f3f4f6;border-radius:6px;overflow-x:auto;' +
  'font-family:Menlo,Consolas,monospace;font-size:14px;line-height:1.4;white-space:pre-wrap;';

export interface MarkdownHtmlOptions {
  /** Click tracking: applied to every http(s) link href, never to mailto or images. */
  rewriteLink?: (url: string) => string;
}

/**
 * http(s) with its "//" and mailto only, whatever the case; relative and every other scheme are
 * refused, and so is `https:evil.example`, which a browser opens as https://evil.example/ but which
 * is no URL click tracking (isHttpUrl) would recognise.
 */
export function isAllowedLinkUrl(url: string): boolean {
  return /^(?:https?:\/\/|mailto:)/i.test(url);
}

export function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/** Escapes text for an HTML element body or a double-quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Markdown source, or its tokens when one parse feeds several renderers. */
export type Markdown = string | Token[];

export function parseMarkdown(markdown: Markdown): Token[] {
  return typeof markdown === 'string' ? md.parse(markdown, {}) : markdown;
}

/** Markdown to an HTML fragment for the email body: safe links, https images, inline styles. */
export function renderMarkdownHtml(markdown: Markdown, options: MarkdownHtmlOptions = {}): string {
  return md.renderer.render(parseMarkdown(markdown), md.options, { rewriteLink: options.rewriteLink });
}

function styleTokens(tokens: Token[]): void {
  for (const token of tokens) {
    const style = ELEMENT_STYLES[token.tag];
    if (style && token.nesting !== -1) {
      const existing = token.attrGet('style');
      token.attrSet('style', existing ? `${style}${existing}` : style);
    }
    if (token.children) styleTokens(token.children);
  }
}

/**
 * Whether the link opened at `open` shows nothing: no tokens before its close, or only emphasis
 * marks, line breaks and text with nothing visible (`[ ](…)`, `[*\u200b*](…)`). The tokens are read,
 * not changed: the same tree renders the Telegram and SMS texts.
 */
function blankLabel(tokens: Token[], open: number): boolean {
  for (let i = open + 1; i < tokens.length && tokens[i].type !== 'link_close'; i++) {
    const token = tokens[i];
    if (token.type === 'text' ? hasVisibleText(token.content) : !BLANK_MARKUP.has(token.type)) return false;
  }
  return true;
}

const BLANK_MARKUP = new Set(['softbreak', 'hardbreak', 'strong_open', 'strong_close', 'em_open', 'em_close', 's_open', 's_close']);

md.renderer.rules.link_open = (tokens, idx, _options, env: MarkdownHtmlOptions) => {
  const token = tokens[idx];
  const href = token.attrGet('href') ?? '';
  const target = env.rewriteLink && isHttpUrl(href) ? env.rewriteLink(href) : href;
  const title = token.attrGet('title');
  const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
  // A link without a label ([](https://…), or one of spaces alone) would be invisible: it shows its
  // address, as in Telegram and SMS.
  const label = blankLabel(tokens, idx) ? escapeHtml(href) : '';
  return `<a href="${escapeHtml(target)}"${titleAttr} style="${ELEMENT_STYLES.a}" target="_blank" rel="noopener noreferrer">${label}`;
};

md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  const alt = self.renderInlineAsText(token.children ?? [], options, env);
  const src = token.attrGet('src') ?? '';
  if (!/^https:\/\//i.test(src)) return escapeHtml(alt);
  const title = token.attrGet('title');
  const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
  return `<img src="${escapeHtml(src)}" alt="${escapeHtml(alt)}"${titleAttr} style="${ELEMENT_STYLES.img}">`;
};

const renderCode = (content: string): string => `<pre style="${PRE_STYLE}"><code>${escapeHtml(content)}</code></pre>\n`;
md.renderer.rules.fence = (tokens, idx) => renderCode(tokens[idx].content);
md.renderer.rules.code_block = (tokens, idx) => renderCode(tokens[idx].content);
