/** One documentation page, as the MCP tools serve it. */
export interface DocPage {
  slug: string;
  title: string;
  /** The markdown after the front matter. */
  body: string;
  sections: DocSection[];
  /**
   * Whether get_herald_context carries the page's text: front matter `context: false` leaves out a
   * page that is a record rather than a guide (benchmark figures); it is still listed, searched
   * and served by get_doc_page.
   */
  inContext: boolean;
}

/** A heading and the text under it, down to the next heading of any level: the unit of search. */
export interface DocSection {
  heading: string;
  text: string;
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;
const HEADING = /^(#{1,6})[ \t]+(.+?)[ \t#]*$/;
export const FENCE = /^[ \t]*(```|~~~)/;

/** `key: value` lines of a front matter block; values may be quoted. */
function frontMatterFields(block: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of block.split(/\r?\n/)) {
    const match = /^([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*)$/.exec(line);
    if (!match) continue;
    fields[match[1]] = match[2].trim().replace(/^(["'])(.*)\1$/, '$2');
  }
  return fields;
}

/**
 * Splits markdown at its headings (headings inside code fences are code). Sections with no text,
 * such as a title heading directly followed by a subheading, are left out.
 */
export function splitSections(body: string, fallbackHeading: string): DocSection[] {
  const sections: DocSection[] = [];
  let heading = fallbackHeading;
  let lines: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    const text = lines.join('\n').trim();
    if (text) sections.push({ heading, text });
  };
  for (const line of body.split(/\r?\n/)) {
    const fenceMark = FENCE.exec(line)?.[1];
    if (fenceMark) {
      if (fence === undefined) fence = fenceMark;
      else if (fence === fenceMark) fence = undefined;
    }
    const match = fence === undefined && !fenceMark ? HEADING.exec(line) : null;
    if (match) {
      flush();
      heading = match[2];
      lines = [];
    } else {
      lines.push(line);
    }
  }
  flush();
  return sections;
}

/**
 * Reads a page: front matter `slug` and `title` when present, else the file name and the first
 * heading; `context: false` keeps its text out of the assembled context. Never throws: a page with
 * odd front matter is still served.
 */
export function parseDocPage(fileName: string, text: string): DocPage {
  const source = text.replace(/^\uFEFF/, '');
  const frontMatter = FRONT_MATTER.exec(source);
  const fields = frontMatter ? frontMatterFields(frontMatter[1]) : {};
  const body = (frontMatter ? source.slice(frontMatter[0].length) : source).replace(/^\s*\n/, '');
  const slug = fields.slug || fileName.replace(/\.md$/i, '');
  const firstHeading = body.split(/\r?\n/).map((line) => HEADING.exec(line)?.[2]).find(Boolean);
  const title = fields.title || firstHeading || slug;
  return { slug, title, body, sections: splitSections(body, title), inContext: fields.context?.toLowerCase() !== 'false' };
}
