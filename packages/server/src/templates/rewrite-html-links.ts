import { escapeHtml, isHttpUrl } from '../rendering/markdown.js';

// A start tag, its name in the first group.
const START_TAG = /<([a-z][^\s/>]*)[^>]*>/gi;
// A link attribute of a tag (href, xlink:href, form action, formaction), double-, single- or
// un-quoted. A space or "/" before the name keeps data-href out and lets <a/href=…> in.
const LINK_ATTRIBUTE = /([\s/](?:xlink:)?(href|action|formaction)\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;
// Schemes that run code or smuggle content when clicked; stripped whatever the template says.
const UNSAFE_SCHEME = /^(?:javascript|vbscript|data):/i;
// Named references that matter in a URL; HTML names them case-sensitively (&Tab;, &colon;).
const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  quot: '"',
  apos: "'",
  lt: '<',
  gt: '>',
  colon: ':',
  Tab: '\t',
  NewLine: '\n',
  sol: '/',
  lpar: '(',
  rpar: ')',
};

/**
 * Attribute-value references back to characters, as a browser reads them: numeric ones with or
 * without their ";" (`&#106avascript:` is "javascript:"), and the named ones a URL may hide in.
 */
export function decodeHtmlEntities(text: string): string {
  return text.replace(/&(?:#x([0-9a-f]+);?|#(\d+);?|([a-z]+);)/gi, (entity, hex, dec, name) => {
    if (hex || dec) {
      const code = Number.parseInt(hex ?? dec, hex ? 16 : 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[name] ?? NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
}

/**
 * The links of a rendered template's HTML: every link attribute of every tag (an anchor's or an
 * area's href, an SVG xlink:href, a form's action) that names javascript:, vbscript: or data:
 * becomes "#" (a variable may have supplied it); http(s) hrefs of anchors and areas go through
 * `rewrite` (click tracking); the rest (mailto:, tel:, anchors) stay as written.
 */
export function rewriteHtmlLinks(html: string, rewrite?: (url: string) => string): string {
  return html.replace(START_TAG, (tag, name: string) => {
    const clickable = /^(?:a|area)$/i.test(name);
    return tag.replace(LINK_ATTRIBUTE, (whole, head: string, attribute: string, double?: string, single?: string, bare?: string) => {
      const url = decodeHtmlEntities(double ?? single ?? bare ?? '').trim();
      // Browsers ignore whitespace and control characters inside a scheme ("java\tscript:").
      if (UNSAFE_SCHEME.test(url.replace(/[\s\u0000-\u001f]+/g, ''))) return `${head}"#"`;
      if (rewrite && clickable && attribute.toLowerCase() === 'href' && !/xlink:/i.test(head) && isHttpUrl(url)) {
        return `${head}"${escapeHtml(rewrite(url))}"`;
      }
      return whole;
    });
  });
}
