import { escapeHtml, isHttpUrl } from '../rendering/markdown.js';

// The href of every <a> element, double-, single- or un-quoted. `\s` before href keeps data-href out.
const ANCHOR_HREF = /(<a\b[^>]*?\shref\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;
// Schemes that run code or smuggle content when clicked; stripped whatever the template says.
const UNSAFE_SCHEME = /^(?:javascript|vbscript|data):/i;
const NAMED_ENTITIES: Record<string, string> = { amp: '&', quot: '"', apos: "'", lt: '<', gt: '>' };

/** Attribute-value entities back to characters (what a browser would follow). */
export function decodeHtmlEntities(text: string): string {
  return text.replace(/&(?:#x([0-9a-f]+)|#(\d+)|([a-z]+));/gi, (entity, hex, dec, name) => {
    if (hex || dec) {
      const code = Number.parseInt(hex ?? dec, hex ? 16 : 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
}

/**
 * The links of a rendered template's HTML: http(s) hrefs go through `rewrite` (click tracking),
 * javascript:, vbscript: and data: hrefs become "#" (a variable may have supplied them), the rest
 * (mailto:, tel:, anchors) stay as written.
 */
export function rewriteHtmlLinks(html: string, rewrite?: (url: string) => string): string {
  return html.replace(ANCHOR_HREF, (whole, head: string, double?: string, single?: string, bare?: string) => {
    const url = decodeHtmlEntities(double ?? single ?? bare ?? '').trim();
    // Browsers ignore whitespace and control characters inside a scheme ("java\tscript:").
    if (UNSAFE_SCHEME.test(url.replace(/[\s\u0000-\u001f]+/g, ''))) return `${head}"#"`;
    if (rewrite && isHttpUrl(url)) return `${head}"${escapeHtml(rewrite(url))}"`;
    return whole;
  });
}
