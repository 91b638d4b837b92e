import { hasVisibleText } from './clean-text.js';
import { parseMarkdown, type Markdown } from './markdown.js';
import { renderMarkdownText, type TextDialect } from './render-markdown-text.js';

/** A link as readable text: "label (address)", or just the address when the label is the address. */
export function describeLink(label: string, href: string, auto: boolean): string {
  const address = href.replace(/^mailto:/i, '');
  if (!hasVisibleText(label)) return address;
  if (auto || label === address || label === href) return label;
  return `${label} (${address})`;
}

const identity = (text: string): string => text;

/** Markdown markers removed; links, headings, quotes and lists keep a plain-text shape. */
export const plainTextDialect: TextDialect = {
  text: identity,
  strong: identity,
  em: identity,
  strike: identity,
  code: identity,
  link: describeLink,
  image: (alt, src) => (/^https:\/\//i.test(src) ? describeLink(alt, src, false) : alt),
  heading: identity,
  blockquote: (inner) => inner.split('\n').map((line) => (line ? `> ${line}` : '>')).join('\n'),
  codeBlock: identity,
  // An ASCII bullet keeps SMS in GSM-7: "•" is outside it and would halve the segment size.
  bullet: '- ',
  rule: '---',
};

export function markdownToPlainText(markdown: Markdown, dialect: TextDialect = plainTextDialect): string {
  return renderMarkdownText(parseMarkdown(markdown), dialect);
}
