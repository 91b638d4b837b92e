import { parse, type DefaultTreeAdapterMap } from 'parse5';
import { escapeHtml, isHttpUrl } from '../rendering/markdown.js';

type Element = DefaultTreeAdapterMap['element'];
type ParentNode = DefaultTreeAdapterMap['parentNode'];

// Link attributes: an anchor's or area's href, an SVG xlink:href, a form's action, a button's formaction.
const LINK_ATTRIBUTES = new Set(['href', 'xlink:href', 'action', 'formaction']);
// Schemes that run code or smuggle content when clicked; stripped whatever the template says.
const UNSAFE_SCHEME = /^(?:javascript|vbscript|data):/i;

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Rounds of the two readings after the first before the HTML is given up on (it never takes more than one). */
const MAX_ROUNDS = 4;

/**
 * The links of a rendered template's HTML: every link attribute of every element (an anchor's or
 * an area's href, an SVG xlink:href, a form's action) that names javascript:, vbscript: or data:
 * becomes "#" (a variable may have supplied it); http(s) hrefs of anchors and areas go through
 * `rewrite` (click tracking); the rest (mailto:, tel:, anchors) stay as written.
 *
 * The HTML is read by an HTML5 parser (parse5), so elements and attributes are exactly those a
 * browser sees, whatever the quoting, comments or raw-text elements around them, in time linear
 * in the length; only the link attributes are rewritten, in place, and every other byte is kept.
 *
 * It is read both ways a browser can read it. A mail client shows HTML with scripts off, and so
 * reads a <noscript>'s content as markup; with scripts on, that content is text, and a
 * `</noscript>` written inside an attribute ends it early, making markup of what follows. The
 * links are rewritten as a mail client reads them, then made safe under either reading until
 * neither finds one more to change.
 */
export function rewriteHtmlLinks(html: string, rewrite?: (url: string) => string): string {
  let out = rewritePass(html, false, rewrite);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const next = rewritePass(rewritePass(out, true), false);
    if (next === out) return out;
    out = next;
  }
  // Never met: HTML that keeps changing under its two readings is shown as text.
  return escapeHtml(html);
}

/** One reading of the HTML, with scripts on or off, and its links rewritten as described above. */
function rewritePass(html: string, scriptingEnabled: boolean, rewrite?: (url: string) => string): string {
  // Where the parser met a repeated attribute, in source order.
  const duplicates: number[] = [];
  const tree = parse(html, {
    scriptingEnabled,
    sourceCodeLocationInfo: true,
    onParseError: (error) => {
      if (error.code === 'duplicate-attribute') duplicates.push(error.startOffset);
    },
  });
  const edits: Edit[] = [];
  visitElements(tree, (element) => {
    const location = element.sourceCodeLocation;
    if (!location?.attrs || !location.startTag) return;
    const clickable = element.tagName === 'a' || element.tagName === 'area';
    const values = new Map<string, string>();
    for (const attribute of element.attrs) {
      const name = qualifiedName(attribute);
      if (!LINK_ATTRIBUTES.has(name)) continue;
      const url = attribute.value.trim();
      // Browsers ignore whitespace and control characters inside a scheme ("java\tscript:").
      if (UNSAFE_SCHEME.test(url.replace(/[\s\u0000-\u001f]+/g, ''))) values.set(name, '#');
      else if (rewrite && clickable && name === 'href' && isHttpUrl(url)) values.set(name, rewrite(url));
    }
    const { startOffset, endOffset } = location.startTag;
    if (anyWithin(duplicates, startOffset, endOffset)) {
      // A repeated attribute counts once for a browser (the first), but a lesser reader might take
      // the other: the tag is written again from the attributes the parser kept.
      edits.push({ start: startOffset, end: endOffset, text: startTag(html, element, values) });
      return;
    }
    for (const [name, value] of values) {
      // An attribute the parser moved from a repeated <html> or <body> tag has no place of its own.
      const at = location.attrs[name] ?? location.attrs[name.replace(/^xlink:/, '')];
      if (!at) continue;
      const nameAsWritten = html.slice(at.startOffset, at.startOffset + name.length);
      edits.push({ start: at.startOffset, end: at.endOffset, text: `${nameAsWritten}="${escapeHtml(value)}"` });
    }
  });
  if (edits.length === 0) return html;
  edits.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const edit of edits) {
    out += html.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + html.slice(at);
}

/** Whether an offset of `sorted` (ascending, as the parser reports them) lies strictly between `start` and `end`. */
function anyWithin(sorted: number[], start: number, end: number): boolean {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle] <= start) low = middle + 1;
    else high = middle;
  }
  return low < sorted.length && sorted[low] < end;
}

const qualifiedName = (attribute: { prefix?: string; name: string }) => (attribute.prefix ? `${attribute.prefix}:${attribute.name}` : attribute.name);

/** An element's start tag written from its parsed attributes, `values` replacing some of them. */
function startTag(html: string, element: Element, values: Map<string, string>): string {
  const { startOffset, endOffset } = element.sourceCodeLocation!.startTag!;
  const attributes = element.attrs.map((attribute) => {
    const name = qualifiedName(attribute);
    return ` ${name}="${escapeHtml(values.get(name) ?? attribute.value)}"`;
  });
  const selfClosing = html.slice(startOffset, endOffset).endsWith('/>');
  return `<${html.slice(startOffset + 1, startOffset + 1 + element.tagName.length)}${attributes.join('')}${selfClosing ? ' />' : '>'}`;
}

/** Every element of the tree, a <template>'s content included. */
function visitElements(root: ParentNode, visit: (element: Element) => void): void {
  const stack: ParentNode[] = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if ('tagName' in node) {
      visit(node);
      if (node.tagName === 'template') stack.push((node as DefaultTreeAdapterMap['template']).content);
    }
    for (const child of node.childNodes) if ('childNodes' in child) stack.push(child);
  }
}
